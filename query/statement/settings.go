package statement

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	ch "github.com/AfterShip/clickhouse-sql-parser/parser"
)

type settingKind uint8

const (
	settingNumber settingKind = iota + 1 // numbers and booleans
	settingString
)

// allowedSettings are the settings a statement's SETTINGS clause may set:
// limits, performance knobs, join and aggregation behaviour, output details,
// and workload scheduling. Anything else is refused: settings that change
// security or name resolution (readonly, allow_ddl, allow_introspection_*,
// allow_experimental_*, enable_analyzer, prefer_column_name_to_alias,
// additional_table_filters, ...), that reach outside the tenant or machine
// (http_*, s3_*, remote_*, distributed and parallel replica settings,
// use_query_cache, send_logs_level, log_queries), and user-level limits.
var allowedSettings = map[string]settingKind{
	// limits
	"max_execution_time": settingNumber, "max_memory_usage": settingNumber, "max_threads": settingNumber,
	"max_rows_to_read": settingNumber, "max_bytes_to_read": settingNumber, "max_result_rows": settingNumber,
	"max_result_bytes": settingNumber, "max_rows_to_group_by": settingNumber, "max_rows_to_sort": settingNumber,
	"max_bytes_to_sort": settingNumber, "max_rows_in_join": settingNumber, "max_bytes_in_join": settingNumber,
	"max_rows_in_set": settingNumber, "max_bytes_in_set": settingNumber, "max_rows_in_distinct": settingNumber,
	"max_bytes_in_distinct": settingNumber, "max_columns_to_read": settingNumber, "max_temporary_columns": settingNumber,
	"max_temporary_non_const_columns": settingNumber, "max_subquery_depth": settingNumber, "max_ast_depth": settingNumber,
	"max_ast_elements": settingNumber, "max_expanded_ast_elements": settingNumber, "max_execution_speed": settingNumber,
	"min_execution_speed": settingNumber, "max_execution_speed_bytes": settingNumber, "min_execution_speed_bytes": settingNumber,
	"timeout_before_checking_execution_speed": settingNumber, "max_partitions_to_read": settingNumber,
	"max_temporary_data_on_disk_size_for_query": settingNumber,
	"result_overflow_mode":                      settingString, "read_overflow_mode": settingString, "timeout_overflow_mode": settingString,
	"group_by_overflow_mode": settingString, "sort_overflow_mode": settingString, "join_overflow_mode": settingString,
	"set_overflow_mode": settingString, "distinct_overflow_mode": settingString,
	// memory and spilling
	"max_bytes_before_external_group_by": settingNumber, "max_bytes_before_external_sort": settingNumber,
	"max_bytes_ratio_before_external_group_by": settingNumber, "max_bytes_ratio_before_external_sort": settingNumber,
	"group_by_two_level_threshold": settingNumber, "group_by_two_level_threshold_bytes": settingNumber,
	"distributed_aggregation_memory_efficient": settingNumber,
	// execution
	"max_block_size": settingNumber, "preferred_block_size_bytes": settingNumber, "max_final_threads": settingNumber,
	"use_uncompressed_cache": settingNumber, "optimize_read_in_order": settingNumber,
	"optimize_aggregation_in_order": settingNumber, "optimize_move_to_prewhere": settingNumber,
	"enable_optimize_predicate_expression": settingNumber, "optimize_use_projections": settingNumber,
	"compile_expressions": settingNumber, "min_count_to_compile_expression": settingNumber,
	"use_skip_indexes": settingNumber, "force_primary_key": settingNumber, "force_index_by_date": settingNumber,
	"use_index_for_in_with_subqueries": settingNumber, "short_circuit_function_evaluation": settingString,
	"do_not_merge_across_partitions_select_final": settingNumber, "query_plan_enable_optimizations": settingNumber,
	"final": settingNumber,
	// semantics that stay inside the query
	"join_algorithm": settingString, "join_use_nulls": settingNumber, "join_default_strictness": settingString,
	"any_join_distinct_right_table_keys": settingNumber, "joined_subquery_requires_alias": settingNumber,
	"aggregate_functions_null_for_empty": settingNumber, "transform_null_in": settingNumber,
	"cast_keep_nullable": settingNumber, "enable_positional_arguments": settingNumber,
	"count_distinct_implementation": settingString, "union_default_mode": settingString,
	"data_type_default_nullable": settingNumber, "extremes": settingNumber, "totals_auto_threshold": settingNumber,
	"allow_suspicious_types_in_order_by": settingNumber, "allow_suspicious_types_in_group_by": settingNumber,
	"limit": settingNumber, "offset": settingNumber, "session_timezone": settingString,
	"date_time_output_format": settingString, "log_comment": settingString,
	"output_format_json_quote_64bit_integers": settingNumber, "output_format_json_quote_64bit_floats": settingNumber,
	"output_format_json_quote_denormals": settingNumber, "output_format_json_quote_decimals": settingNumber,
	"output_format_decimal_trailing_zeros": settingNumber, "output_format_json_named_tuples_as_objects": settingNumber,
	"output_format_json_escape_forward_slashes": settingNumber,
	// INSERT ... SELECT
	"max_insert_threads": settingNumber, "max_insert_block_size": settingNumber,
	"min_insert_block_size_rows": settingNumber, "min_insert_block_size_bytes": settingNumber,
	// workload scheduling (SETTINGS workload = <name>)
	"workload": settingString, "use_concurrency_control": settingNumber,
}

// breaksExactlyOnce reports settings the ingest pipeline's exactly-once
// delivery rests on: deduplication tokens and windows, quorum inserts and
// asynchronous inserts. A statement setting one could make the engine
// discard (or double) a batch the pipeline inserts, so they are refused with
// their own hint even where a future allow-list entry would match.
func breaksExactlyOnce(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "dedup") || // insert_deduplicate, insert_deduplication_token, *_deduplication_window, deduplicate_blocks_in_dependent_materialized_views
		strings.HasPrefix(n, "async_insert") || strings.HasPrefix(n, "wait_for_async_insert") ||
		strings.HasPrefix(n, "insert_quorum") || strings.HasPrefix(n, "insert_keeper_")
}

// refuseSetting returns the error for a setting name outside the allow-list,
// or nil when the name is allowed.
func refuseSetting(name string, pos int) *Error {
	if breaksExactlyOnce(name) {
		return badRequest(CodeSetting, pos, "ingest deduplicates batches itself; settings that change insert deduplication, quorum or asynchronous inserts cannot be set",
			"setting %s is not allowed", name)
	}
	if _, ok := allowedSettings[name]; !ok {
		return badRequest(CodeSetting, pos, "settings that change security, reach outside the tenant, or are experimental cannot be set",
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
		kind := allowedSettings[name]
		value, err := settingValue(it.Expr, kind, pos)
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
		a.settings = append(a.settings, settingUse{name: name, value: value, pos: pos})
	}
	return nil
}

// capThreads lowers a max_threads item above the cluster size's cores (or 0, "auto") to
// the cores, in the statement itself, and returns the value that runs. Lowering rather
// than refusing keeps a statement working when autoscaling moved its cluster to a
// smaller size.
func (a *analyzer) capThreads(it *ch.SettingExpr, value string) string {
	limit := a.env.Cluster.MaxThreads
	if limit <= 0 {
		return value
	}
	if n, err := strconv.ParseUint(value, 10, 64); err == nil && n > 0 && n <= uint64(limit) {
		return value
	}
	capped := strconv.Itoa(limit)
	it.Expr = &ch.NumberLiteral{NumPos: it.Expr.Pos(), NumEnd: it.Expr.End(), Literal: capped, Base: 10}
	return capped
}

// settingValue returns the plain value of a setting literal.
func settingValue(e ch.Expr, kind settingKind, pos int) (string, *Error) {
	switch v := e.(type) {
	case *ch.NumberLiteral:
		if kind == settingNumber {
			return v.Literal, nil
		}
	case *ch.StringLiteral:
		if s, ok := plainString(v.Literal); ok && kind == settingString {
			return s, nil
		}
	case *ch.Ident:
		if kind == settingNumber && v.QuoteType == ch.Unquoted {
			switch strings.ToLower(v.Name) {
			case "true":
				return "1", nil
			case "false":
				return "0", nil
			}
		}
	case *ch.BoolLiteral:
		if kind == settingNumber {
			if strings.EqualFold(v.Literal, "true") {
				return "1", nil
			}
			return "0", nil
		}
	}
	if kind == settingString {
		return "", badRequest(CodeSetting, pos, "write the value as a string literal without escapes", "invalid setting value")
	}
	return "", badRequest(CodeSetting, pos, "write the value as a number", "invalid setting value")
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
