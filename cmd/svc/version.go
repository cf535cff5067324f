package main

import (
	"context"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() { register(versionCommand) }

// version is the CLI's version: the module version it was built at (go install
// ...@v1.2.3), else "dev" for a build from a work tree. It is what "svc version"
// reports and what every request's user agent carries.
var version = func() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}()

// userAgent names the CLI to the service: the request log records source "cli" and
// client_version from it (SPEC: Platform request logs).
var userAgent = "svc-cli/" + version

func versionCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Show the CLI's version and the user agent it sends",
		Args:  args(0, 0),
		RunE: runE(func(context.Context, []string) error {
			return a.emit(map[string]string{"version": version, "user_agent": userAgent}, nil)
		}),
	}
}
