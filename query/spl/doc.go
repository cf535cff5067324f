// Package spl compiles an SPL-style search language to ClickHouse SQL over a
// database's logsearch_events table and runs the compiled plan on an engine.
//
// The pipeline is: Parse (lexer and parser into a closed AST with positioned
// errors), Compile (AST to a Plan of SQL statements, with chart series
// resolved through a Resolver), and Search (the executor: runs the plan
// through the small Engine interface and assembles the response). The
// language, its semantics over JSON documents and its limits are documented
// in docs/spl.md; the static manifest of everything the compiler accepts is
// Capabilities, built from the same tables the parser and compiler use.
package spl
