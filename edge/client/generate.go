// Package client is the service's Go SDK: a typed HTTP client generated from the
// service's own OpenAPI document (edge/openapi.json) by oapi-codegen, a Go tool of this
// module. The command-line client cmd/svc is built on it; other Go programs can use it
// the same way:
//
//	c, _ := client.NewClientWithResponses("http://localhost:8080",
//		client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
//			r.Header.Set("Authorization", "Bearer "+key)
//			return nil
//		}))
//	tables, _ := c.ListTablesWithResponse(ctx, &client.ListTablesParams{})
//
// Regenerate after changing the document with `go generate ./edge/client`;
// TestGeneratedClientIsCurrent fails while a generated file is stale. The output is
// split in three files (types, Client, ClientWithResponses), and internal/split moves the
// request builders and the response types and parsers of the last two into files of their
// own, to keep each one far below the repository's 1 MiB file limit.
package client

//go:generate go tool oapi-codegen -config types.yaml ../openapi.json
//go:generate go tool oapi-codegen -config client.yaml ../openapi.json
//go:generate go run ./internal/split Client client.gen.go client_requests.gen.go
//go:generate go tool oapi-codegen -config responses.yaml ../openapi.json
//go:generate go run ./internal/split ClientWithResponses responses.gen.go responses_parse.gen.go
