package statement

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"
)

type settingKind uint8

const (
	settingAny    settingKind = iota // a number, boolean or plain string; the engine checks it
	settingNumber                    // numbers and booleans
	settingString
)

// settingKinds are the settings whose value this package reads itself.
var settingKinds = map[string]settingKind{
	"max_threads": settingNumber, "max_execution_time": settingNumber,
	"workload": settingString, "use_concurrency_control": settingNumber,
}

// deniedSettings are the settings a statement's SETTINGS clause may not set, each
// with the reason; every other setting is passed to the engine (SPEC: "SETTINGS
// clauses are passed to the engine"), which validates names and values. The list
// is short on purpose: it names what would let one statement weaken the
// service's guarantees, not what might be unwise. Served in edge/openapi.json
// (POST /v1/query); keep the two together.
var deniedSettings = map[string]string{
	// access control and name resolution: the service's checks rest on them
	"readonly":                                  "it would lift the read-only mode reads run in",
	"allow_ddl":                                 "it changes what the engine lets a statement do",
	"allow_introspection_functions":             "introspection reads the engine process's memory and symbols",
	"additional_table_filters":                  "it changes the rows a table yields, beside row policies",
	"additional_result_filter":                  "it changes the rows a statement yields, beside row policies",
	"enable_analyzer":                           "the service verifies statements under the analyzer it runs",
	"allow_experimental_analyzer":               "the service verifies statements under the analyzer it runs",
	"prefer_column_name_to_alias":               "it changes which column a name resolves to after verification",
	"empty_result_for_aggregation_by_empty_set": "it changes results the counts report rests on",
	"compatibility":                             "it sets many settings at once, the analyzer among them",
	"apply_deleted_mask":                        "rows deleted from a table would show again",
	"asterisk_include_materialized_columns":     "* is the document; the table's other columns are the service's",
	"asterisk_include_alias_columns":            "* is the document; the table's other columns are the service's",
	"priority":                                  "scheduling across statements is the service's: use SETTINGS workload",
	// server-wide resources and other tenants
	"use_query_cache":                 "the query cache is shared by every tenant of the engine",
	"enable_reads_from_query_cache":   "the query cache is shared by every tenant of the engine",
	"enable_writes_to_query_cache":    "the query cache is shared by every tenant of the engine",
	"send_logs_level":                 "server logs name other tenants' objects",
	"log_queries":                     "the query log is the engine's, shared by every tenant",
	"log_query_threads":               "the query log is the engine's, shared by every tenant",
	"log_query_views":                 "the query log is the engine's, shared by every tenant",
	"log_profile_events":              "the query log is the engine's, shared by every tenant",
	"log_processors_profiles":         "the query log is the engine's, shared by every tenant",
	"log_formatted_queries":           "the query log is the engine's, shared by every tenant",
	"log_queries_min_type":            "the query log is the engine's, shared by every tenant",
	"log_queries_probability":         "the query log is the engine's, shared by every tenant",
	"os_thread_priority":              "thread priority is taken from the engine's other statements",
	"load_balancing":                  "replica choice is the service's",
	"max_parallel_replicas":           "replica choice is the service's",
	"prefer_localhost_replica":        "replica choice is the service's",
	"skip_unavailable_shards":         "replica choice is the service's",
	"max_http_get_redirects":          "statements do not reach URLs",
	"enable_url_encoding":             "statements do not reach URLs",
	"max_concurrent_queries_for_user": "user-level limits are the service's",
}

// deniedPrefixes deny families of settings, by the start of the parsed name.
var deniedPrefixes = []struct{ prefix, reason string }{
	{"allow_experimental_", "experimental engine features are not supported"},
	{"allow_introspection_", "introspection reads the engine process's memory and symbols"},
	{"http_", "statements do not reach URLs"},
	{"s3_", "statements do not reach object storage"},
	{"s3queue_", "statements do not reach object storage"},
	{"azure_", "statements do not reach object storage"},
	{"hdfs_", "statements do not reach object storage"},
	{"remote_", "statements do not reach other servers"},
	{"distributed_ddl", "DDL runs through the service"},
	{"parallel_replicas", "replica choice is the service's"},
	{"query_cache_", "the query cache is shared by every tenant of the engine"},
	{"filesystem_cache", "the filesystem cache is shared by every tenant of the engine"},
	{"enable_filesystem_cache", "the filesystem cache is shared by every tenant of the engine"},
	{"opentelemetry_", "trace export is the engine's, shared by every tenant"},
	{"query_profiler_", "the profiler writes to the engine's shared logs"},
	{"memory_profiler_", "the profiler writes to the engine's shared logs"},
	{"background_", "background pools are the engine's, shared by every tenant"},
	{"max_network_bandwidth", "network limits are the engine's, shared by every tenant"},
	{"output_format_", "the service reads the engine's answer itself: choose the answer's format with the request's format"},
	{"format_", "the service reads the engine's answer itself (and format_display_secrets_* would show credentials)"},
	{"display_secrets", "it would show credentials"},
	{"param_", "query parameters would be substituted after verification"},
}

// passedOutputFormats are output_format_* settings that only change how values
// are written, passed to the engine despite the output_format_ prefix.
var passedOutputFormats = map[string]bool{
	"output_format_json_quote_64bit_integers": true, "output_format_json_quote_64bit_floats": true,
	"output_format_json_quote_denormals": true, "output_format_json_quote_decimals": true,
	"output_format_decimal_trailing_zeros": true, "output_format_json_named_tuples_as_objects": true,
	"output_format_json_escape_forward_slashes": true,
}

// deniedSuffixes deny limits of a whole engine user or of all users: the
// service's tenants share them.
var deniedSuffixes = []string{"_for_user", "_for_all_users"}

// breaksExactlyOnce reports settings the ingest pipeline's exactly-once
// delivery rests on: deduplication tokens and windows, quorum inserts and
// asynchronous inserts. A statement setting one could make the engine
// discard (or double) a batch the pipeline inserts, so they are refused with
// their own hint.
func breaksExactlyOnce(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "dedup") || // insert_deduplicate, insert_deduplication_token, *_deduplication_window, deduplicate_blocks_in_dependent_materialized_views
		strings.HasPrefix(n, "async_insert") || strings.HasPrefix(n, "wait_for_async_insert") ||
		strings.HasPrefix(n, "insert_quorum") || strings.HasPrefix(n, "insert_keeper_")
}

// deniedReason returns why a setting (a parsed SETTINGS item's name) may not be
// set, or "" when it is passed to the engine.
func deniedReason(name string) string {
	n := strings.ToLower(name)
	if r, ok := deniedSettings[n]; ok {
		return r
	}
	if passedOutputFormats[n] {
		return ""
	}
	for _, p := range deniedPrefixes {
		if strings.HasPrefix(n, p.prefix) {
			return p.reason
		}
	}
	for _, suf := range deniedSuffixes {
		if strings.HasSuffix(n, suf) {
			return "user-level limits are the service's"
		}
	}
	return ""
}

// refuseSetting returns the error for a denied setting name, or nil when the
// setting is passed to the engine.
func refuseSetting(name string, pos int) *Error {
	if breaksExactlyOnce(name) {
		return badRequest(CodeSetting, pos, "ingest deduplicates batches itself; settings that change insert deduplication, quorum or asynchronous inserts cannot be set",
			"setting %s is not allowed", name)
	}
	if r := deniedReason(name); r != "" {
		return badRequest(CodeSetting, pos, "remove it from the SETTINGS clause: "+r,
			"setting %s is not allowed", name)
	}
	return nil
}

// settingsClause validates a SETTINGS clause (at any level of the
// statement) and records its items.
func (a *analyzer) settingsClause(s *ch.SettingsClause) *Error {
	for _, it := range s.Items {
		if it == nil || it.Name == nil {
			return unsupportedNode(s)
		}
		name := it.Name.Name
		pos := int(it.Pos())
		if err := checkName(name, pos); err != nil {
			return err
		}
		normalizeIdent(it.Name)
		if err := refuseSetting(name, pos); err != nil {
			return err
		}
		kind := settingKinds[name]
		value, str, err := settingValue(it.Expr, kind, pos)
		if err != nil {
			return err
		}
		if name == "workload" {
			if err := checkWorkloadName(value, pos); err != nil {
				return err
			}
		}
		if name == "max_threads" {
			value = a.capThreads(it, value)
		}
		a.settings = append(a.settings, settingUse{name: name, value: value, pos: pos, str: str})
	}
	return nil
}

// capThreads lowers a max_threads item above the cluster size's cores (or 0, "auto") to
// the cores, in the statement itself, and returns the value that runs. Lowering rather
// than refusing keeps a statement working when autoscaling moved its cluster to a
// smaller size.
func (a *analyzer) capThreads(it *ch.SettingExpr, value string) string {
	capped := a.threadsLimit(value)
	if capped != value {
		it.Expr = &ch.NumberLiteral{NumPos: it.Expr.Pos(), NumEnd: it.Expr.End(), Literal: capped, Base: 10}
	}
	return capped
}

// threadsLimit returns the max_threads value a statement runs with for the asked
// value, and records a hint in the answer when it lowered it.
func (a *analyzer) threadsLimit(value string) string {
	limit := a.env.Cluster.MaxThreads
	if limit <= 0 {
		return value
	}
	if n, err := strconv.ParseUint(value, 10, 64); err == nil && n > 0 && n <= uint64(limit) {
		return value
	}
	capped := strconv.Itoa(limit)
	hint := fmt.Sprintf("max_threads = %s lowered to %s, the cores of the cluster's size", value, capped)
	if !slices.Contains(a.hints, hint) {
		a.hints = append(a.hints, hint)
	}
	return capped
}

// settingValue returns the plain value of a setting literal and whether it was
// a string.
func settingValue(e ch.Expr, kind settingKind, pos int) (string, bool, *Error) {
	switch v := e.(type) {
	case *ch.NumberLiteral:
		if kind != settingString {
			return v.Literal, false, nil
		}
	case *ch.StringLiteral:
		if s, ok := plainString(v.Literal); ok && kind != settingNumber {
			return s, true, nil
		}
	case *ch.Ident:
		if kind != settingString && v.QuoteType == ch.Unquoted {
			switch strings.ToLower(v.Name) {
			case "true":
				return "1", false, nil
			case "false":
				return "0", false, nil
			}
		}
	case *ch.BoolLiteral:
		if kind != settingString {
			if strings.EqualFold(v.Literal, "true") {
				return "1", false, nil
			}
			return "0", false, nil
		}
	}
	switch kind {
	case settingString:
		return "", false, badRequest(CodeSetting, pos, "write the value as a string literal without escapes", "invalid setting value")
	case settingNumber:
		return "", false, badRequest(CodeSetting, pos, "write the value as a number", "invalid setting value")
	}
	return "", false, badRequest(CodeSetting, pos, "write the value as a number, true/false or a string literal without escapes", "invalid setting value")
}

// checkWorkloadName accepts the workload and resource names this package
// creates: plain identifiers.
func checkWorkloadName(name string, pos int) *Error {
	if !isPlain(name) || len(name) > 128 {
		return badRequest(CodeWorkload, pos, "workload names are letters, digits and underscores", "invalid workload name %q", name)
	}
	return nil
}

// profiles returns the settings the caller's settings profiles apply and
// the names a statement may not change. Profiles apply to custom-role keys
// holding one of their roles; when several set
// the same setting the profile whose name sorts first wins, and a READONLY
// or CONST constraint from any of them pins the setting.
func (a *analyzer) profiles() ([]Setting, map[string]string) {
	p := a.env.Principal
	if !p.byGrants() {
		return nil, nil
	}
	var matching []SettingsProfile
	for _, prof := range a.access.SettingsProfiles() {
		if p.holdsAny(prof.Roles) {
			matching = append(matching, prof)
		}
	}
	sort.Slice(matching, func(i, j int) bool { return matching[i].Name < matching[j].Name })
	var out []Setting
	values := map[string]string{}
	locked := map[string]string{}
	for _, prof := range matching {
		for _, s := range prof.Settings {
			if _, seen := values[s.Name]; !seen {
				values[s.Name] = s.Value
				out = append(out, Setting{Name: s.Name, Value: s.Value})
			}
			if s.Constraint != ConstraintNone {
				if _, ok := locked[s.Name]; !ok {
					locked[s.Name] = values[s.Name]
				}
			}
		}
	}
	return out, locked
}

// requestSettings assembles the engine settings of a read or INSERT ...
// SELECT and refuses statement settings that change a pinned profile
// setting.
func (a *analyzer) requestSettings(write bool) ([]Setting, *Error) {
	if err := a.refuseReadLimits(); err != nil {
		return nil, err
	}
	prof, locked := a.profiles()
	for _, s := range a.settings {
		if v, ok := locked[s.name]; ok && v != s.value {
			return nil, badRequest(CodeSettingLocked, s.pos, "remove the setting from the statement",
				"setting %s is fixed to %q by a settings profile of this key's roles", s.name, v)
		}
	}
	out := append([]Setting(nil), prof...)
	// The row model needs these (DESIGN.md): paths are Dynamic.
	out = append(out,
		Setting{Name: "allow_suspicious_types_in_order_by", Value: "1"},
		Setting{Name: "allow_suspicious_types_in_group_by", Value: "1"},
	)
	if write {
		if !slices.ContainsFunc(a.settings, func(s settingUse) bool { return s.name == "max_execution_time" }) {
			out = append(out, Setting{Name: "max_execution_time", Value: "30"})
		}
	} else {
		// Defense in depth: the engine itself refuses writes and DDL in
		// reads, while the statement may still change allowed settings.
		out = append(out, Setting{Name: "readonly", Value: "2"})
	}
	return out, nil
}
