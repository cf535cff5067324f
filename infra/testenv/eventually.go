package testenv

import (
	"testing"
	"time"
)

// Eventually calls cond until it reports done, and fails the test with cond's last reason
// when timeout passes first. The timeout bounds a wait on state that proves something
// happened (rows counted, a status reached); it is not a measure of speed, so make it
// generous. cond runs on the test's goroutine and may call t.Fatal itself for an error
// that waiting will not cure.
//
//	testenv.Eventually(t, time.Minute, func() (bool, string) {
//		n := count(t)
//		return n == 100, fmt.Sprintf("%d rows of 100", n)
//	})
func Eventually(t testing.TB, timeout time.Duration, cond func() (done bool, reason string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	wait := 10 * time.Millisecond
	for {
		done, reason := cond()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", timeout, reason)
		}
		time.Sleep(wait)
		if wait < 200*time.Millisecond {
			wait *= 2
		}
	}
}
