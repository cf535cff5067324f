// Package statement analyzes every SQL statement of the query API for the
// tenant: it parses, classifies, authorizes and rewrites it, and returns
// either engine SQL to run or a control-plane command.
//
// # Use
//
//	st, err := statement.Analyze(sql, statement.Env{
//		Principal: statement.KeyWithRoles("analyst"),
//		Database:  "default",          // the selected logical database
//		Catalog:   catalog,            // the organization's databases and tables
//		Access:    access,             // roles, grants, row policies, settings profiles
//		Cluster:   statement.Cluster{ReplicatedAccessStorage: true},
//	})
//	// err is an *Error{Status, Code, Message, Hint, Pos}
//	// st.SQL with st.Settings for engine statements, st.Command otherwise
//
// Engine errors and engine text (EXPLAIN output) go back through
// TranslateError.
//
// # How it works
//
// Parsing uses github.com/AfterShip/clickhouse-sql-parser. Statement forms the
// library does not know (row policies, workloads, resources, settings
// profiles, ALTER TABLE ... MODIFY ORDER BY) and the headers it handles badly
// (plain EXPLAIN, DESCRIBE of a subquery, INSERT with WITH or SETTINGS) are
// read by the small tokenizer and recursive-descent parsers of this package;
// expressions inside them are still parsed by the library (parseAt blanks the
// header so positions stay those of the statement). Every decision is made on
// a tree or a token stream, never on text.
//
// Queries are walked by a closed walker (expr.go, query.go, from.go): a node
// type it does not know is refused, so nothing reaches the engine that the
// analysis has not looked at. The walk resolves names the way the row model
// requires (scope.go): a bare or dotted identifier is a path into the
// document of one of our tables (user.id becomes doc.user.id, t.user.id
// becomes t.doc.user.id) unless it is a lambda parameter, an alias, a WITH
// name, or a column of a subquery, system view or table function. FROM
// sources come only from allow-lists: the organization's tables by engine
// name (o_<org>__db.t, always qualified), curated system views, harmless
// table functions, subqueries, and CTEs, which are inlined at every use so no
// unqualified table name reaches the engine. The result is rendered by the
// library's formatter with this package's nodes for SELECT clause order,
// identifiers and generated text, then verified independently (verify.go): it
// must lex without escapes in identifiers, parse again, and read only tables
// recorded as reads.
//
// # Decisions where the specification is silent
//
// Principals. UserSession members read like read_only keys; organization
// administrators are admins. Workflows read and INSERT ... SELECT like
// read_write keys and cannot change access control or profiles.
//
// Column grants on documents. A grant's columns are top-level keys of the
// document: GRANT SELECT(user, ts) allows user.id, user.name and ts. A
// statement touching any other top-level key in any clause, or the whole
// document (*, t.*, f(*), a subquery's *), needs a grant without a column
// list. count() and count(*) need any grant on the table.
//
// Row policies are injected by replacing every reference to a table with
// (SELECT doc FROM <engine table> WHERE <filter>) AS <alias>, in every
// subquery, CTE, join, UNION branch and IN, so no alias or outer expression
// of the statement can change what the filter reads. "doc" may not be used as
// an alias, lambda parameter, WITH or CTE name, and aliases may not take the
// name of a table of the query. EXPLAIN is refused when a policy applies (the
// plan would show the filter); DESCRIBE applies them like a read.
//
// Settings. A SETTINGS clause (at any level) may set only the allow-list of
// settings.go: limits, performance and join/aggregation knobs, output
// details, workload and use_concurrency_control. Values are literals.
// Settings profiles apply to custom-role keys holding their roles; when
// several profiles set a setting the profile whose name sorts first wins; a
// statement may not change a READONLY or CONST setting to another value.
// Reads are sent with readonly=2 as defense in depth; every read and INSERT
// ... SELECT with allow_suspicious_types_in_order_by/group_by=1 (DESIGN.md,
// row model); INSERT ... SELECT with max_execution_time=30 unless the
// statement sets it.
//
// System tables. Readable: databases, tables, columns, parts (views filtered
// to the organization's databases, and for custom-role keys to the tables
// their roles may read, with engine names mapped back: tables shows one row
// per logical table with the generations' sizes, parts shows the
// generation; sizes and row counts are NULL for tables whose reads by the
// caller pass row policies, since they would tell how many rows the policies
// hide), workloads, resources, scheduler (as is, for workload
// inspection), and constant or reference tables (one, numbers, zeros,
// functions, table_functions, formats, data_type_families, time_zones,
// aggregate_function_combinators, collations, keywords). Everything else is
// refused. With database=system selected, unqualified names are system views.
//
// Functions. Scalar functions are allowed except a deny-list of those that
// read other tables, dictionaries, files or models, or reveal the host,
// users or server configuration (functions.go). currentDatabase() becomes the
// logical name. Table functions: numbers, zeros, generate_series,
// generateRandom, values, null, format; all others are refused.
//
// INSERT ... SELECT writes into the table's current generation t__g<n>; each
// output row becomes one document: SELECT * copies documents, any other
// SELECT becomes objects keyed by its column names
// (formatRowNoNewline('JSONEachRow', *)). A table without a generation yet
// is a 409. The query's trailing SETTINGS are hoisted into the INSERT.
//
// Names. Identifiers with backslashes, quote characters or control
// characters are refused, since the engine reads escapes the library does
// not; heredocs and non-ASCII outside quotes are refused. Role, policy,
// profile, workload and resource names are plain identifiers.
package statement
