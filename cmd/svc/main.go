// Command svc is the service's command-line client. It talks to the API only through
// the generated Go SDK (edge/client), so it is also the SDK's first user.
//
// Output: a command's result is JSON on stdout (query prints a table on a terminal);
// failures are a JSON error on stderr. Exit codes: 0 ok, 1 error, 2 a selection is
// needed or the command line is wrong, 4 authentication, 130 interrupted.
//
// Each resource's commands live in one small file (org.go, cluster.go, ...) that
// registers itself with register; app.go holds what they share.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
