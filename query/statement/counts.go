package statement

// Counts that tell what the caller may not see. The engine counts every row it reads,
// before row policies filter them and before the curated system views keep only the
// caller's own objects; its rows_read, bytes_read and the errors of read limits would
// tell how many rows a policy hides, or how many objects other tenants of a shared
// engine have. For such statements Statement.CountsHidden is set, so the runner reports
// only what the statement returned, and read-limit settings are refused.

// filteredSystemViews are the system views built over engine catalogs of every tenant.
var filteredSystemViews = map[string]bool{"databases": true, "tables": true, "columns": true, "parts": true}

// readLimitSettings are the settings whose errors report how much the engine read.
var readLimitSettings = map[string]bool{
	"max_rows_to_read": true, "max_bytes_to_read": true, "max_partitions_to_read": true,
	"min_execution_speed": true, "min_execution_speed_bytes": true,
	"max_execution_speed": true, "max_execution_speed_bytes": true,
	"max_rows_to_read_leaf": true, "max_bytes_to_read_leaf": true, "max_estimated_execution_time": true,
}

// countsHidden reports whether the engine's read counts of the statement would reveal
// rows the caller cannot read.
func (a *analyzer) countsHidden() bool {
	if len(a.policies) > 0 {
		return true
	}
	for _, r := range a.reads {
		if r.system && filteredSystemViews[r.ref.Table] {
			return true
		}
	}
	return false
}

// refuseReadLimits refuses read-limit settings in statements whose counts are hidden.
func (a *analyzer) refuseReadLimits() *Error {
	if !a.countsHidden() {
		return nil
	}
	for _, s := range a.settings {
		if readLimitSettings[s.name] {
			return badRequest(CodeSetting, s.pos, "limit the result instead, with LIMIT or max_result_rows",
				"setting %s is not allowed here: the statement reads tables filtered by row policies or system views, whose read counts are not shown", s.name)
		}
	}
	return nil
}
