package localproc

import (
	"os"
	"strings"
)

// inherited are the variables a local engine process gets from svcd's environment: what
// the runtime, the locale and the JVM need to start. Everything else stays in svcd: its
// environment holds the bootstrap key and password, the service secret and storage
// credentials, and a child's environment is readable as /proc/<pid>/environ by anyone
// who may read the child's memory, and goes wherever the child forks to.
var inherited = []string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR",
	"JAVA_HOME", "LD_LIBRARY_PATH",
}

// Env is the environment of a local engine process (the engine, the broker, Temporal):
// the allow-listed variables of this process's environment, then extra, the process's
// own ("NAME=value"). It is the one place a child's environment is decided.
func Env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if allowed(name) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

func allowed(name string) bool {
	if strings.HasPrefix(name, "LC_") {
		return true
	}
	for _, n := range inherited {
		if n == name {
			return true
		}
	}
	return false
}
