package localproc

import (
	"slices"
	"testing"
)

func TestEnvKeepsOnlyTheAllowList(t *testing.T) {
	t.Setenv("PATH", "/usr/bin")
	t.Setenv("LC_TIME", "C")
	t.Setenv("SVC_BOOTSTRAP_PASSWORD", "p")
	t.Setenv("SVC_SERVICE_SECRET", "s")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "a")
	env := Env("SVC_ENGINE_PASSWORD=own")
	f := func(kv string, want bool) {
		t.Helper()
		if got := slices.Contains(env, kv); got != want {
			t.Errorf("%s in the child's environment: %v, want %v (%v)", kv, got, want, env)
		}
	}
	f("PATH=/usr/bin", true)
	f("LC_TIME=C", true)
	f("SVC_ENGINE_PASSWORD=own", true)
	f("SVC_BOOTSTRAP_PASSWORD=p", false)
	f("SVC_SERVICE_SECRET=s", false)
	f("AWS_SECRET_ACCESS_KEY=a", false)
}
