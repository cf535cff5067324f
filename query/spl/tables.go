package spl

import (
	"sort"
	"strings"
)

// The tables in this file are the single source of truth for what the
// language accepts: the parser dispatches on them, the compiler compiles
// through them, and Capabilities publishes them. Adding a command, function,
// operator, span unit or limit here is what makes it exist.

// Limits of the compiler and the executor.
const (
	MaxSearchBytes      = 64 << 10  // length of the search text
	MaxCommands         = 64        // pipeline segments
	MaxExprDepth        = 64        // nesting of expressions
	MaxEvalAssignments  = 50        // assignments in one eval
	MaxAggregates       = 20        // aggregates in stats, chart, timechart
	MaxByFields         = 20        // stats BY fields
	MaxListedFields     = 256       // fields in fields/table/rename/dedup/sort
	MaxInValues         = 1000      // values in one IN list
	MaxSeriesColumns    = 100       // chart/timechart split series columns
	DefaultChartLimit   = 10        // chart/timechart limit= default
	MaxOutputRows       = 10000     // rows returned and counted per stage
	MeasuredStages      = 12        // stages whose output rows are measured
	MaxStageQueryBytes  = 256 << 10 // generated stage-count query size budget
	MaxQueryBytes       = 1 << 20   // generated SQL statement size
	MaxBuckets          = 10000     // continuous timechart buckets
	DefaultBins         = 100       // timechart automatic span target
	MinSpanSeconds      = 1         // timechart span lower bound
	MaxSpanSeconds      = 31 * 86400
	TimelineBuckets     = 100 // target number of timeline buckets
	FieldTopValues      = 5   // most common values per field statistic
	MaxStatisticsFields = 200 // fields described by field_statistics
	DefaultHead         = 10
	MaxValues           = 10000 // values() entries per row
	MaxDiscoveredPaths  = 10000 // document paths considered by table * and field statistics
	MaxErrorsReported   = maxErrors
)

// limitTable lists the limits for the manifest.
var limitTable = []struct {
	Name, Description string
	Value             int64
}{
	{"search_bytes", "maximum length of the search text in bytes", MaxSearchBytes},
	{"commands", "maximum number of pipeline segments", MaxCommands},
	{"expression_depth", "maximum nesting depth of expressions", MaxExprDepth},
	{"eval_assignments", "maximum assignments in one eval", MaxEvalAssignments},
	{"aggregates", "maximum aggregates in one stats, chart or timechart", MaxAggregates},
	{"by_fields", "maximum BY fields of stats", MaxByFields},
	{"listed_fields", "maximum fields listed in one command", MaxListedFields},
	{"in_values", "maximum values in one IN list", MaxInValues},
	{"series_columns", "maximum split series columns of chart and timechart", MaxSeriesColumns},
	{"chart_limit_default", "default limit= of chart and timechart", DefaultChartLimit},
	{"output_rows", "rows returned, and the cap of each stage's output_rows", MaxOutputRows},
	{"measured_stages", "leading stages whose output_rows are measured", MeasuredStages},
	{"stage_query_bytes", "size budget of the generated stage-count query", MaxStageQueryBytes},
	{"query_bytes", "maximum size of one generated SQL statement", MaxQueryBytes},
	{"timechart_buckets", "maximum continuous timechart buckets", MaxBuckets},
	{"timechart_bins_default", "default bins= for an automatic span", DefaultBins},
	{"span_min_seconds", "smallest timechart span", MinSpanSeconds},
	{"span_max_seconds", "largest timechart span", MaxSpanSeconds},
	{"timeline_buckets", "target number of timeline buckets", TimelineBuckets},
	{"field_top_values", "most common values reported per field", FieldTopValues},
	{"statistics_fields", "maximum fields described by field_statistics", MaxStatisticsFields},
	{"head_default", "rows kept by head without a count", DefaultHead},
	{"values_max", "entries returned by values() per row (lexicographically first)", MaxValues},
	{"discovered_paths", "document paths considered by wildcard table and field statistics", MaxDiscoveredPaths},
	{"errors_reported", "maximum errors reported for one search", MaxErrorsReported},
}

// commandSpec describes one command.
type commandSpec struct {
	Name     string
	Synopsis string
	// First: may be the first segment. Later: may follow a pipe.
	First, Later bool
	// Transforming commands turn events into a statistics table.
	Transforming bool
	// NeedsTime: the input must have a _time field.
	NeedsTime bool
	Options   []optionSpec
	parse     func(p *parser, b cmdBase) Command
}

// optionSpec describes a name=value option of a command.
type optionSpec struct {
	Name, Values, Default, Description string
}

var (
	chartOptions = []optionSpec{
		{"limit", "N | topN | bottomN | 0", "10", "series kept by rank; 0 keeps all within the series column limit"},
		{"useother", "true | false", "true", "combine excluded series into OTHER"},
		{"usenull", "true | false", "true", "show events without the split field as NULL"},
	}
	timechartOptions = append([]optionSpec{
		{"span", "<int><unit>", "", "bucket width, units s m h d w, 1s to 31d"},
		{"bins", "N", "100", "target bucket count for an automatic span"},
		{"cont", "true | false", "true", "fill missing buckets across the time window"},
	}, chartOptions...)
	dedupOptions = []optionSpec{
		{"keepempty", "true | false", "false", "keep rows that lack one of the fields"},
	}
)

// unsupportedOptions explains options of Splunk that are recognised but
// not supported, so the error can say so instead of "unknown option".
var unsupportedOptions = map[string]string{
	"minspan":         "minspan is not supported; use span or bins",
	"otherstr":        "custom OTHER labels are not supported",
	"nullstr":         "custom NULL labels are not supported",
	"partial":         "partial is not supported",
	"fixedrange":      "fixedrange is not supported; the time window is the request's earliest and latest",
	"aligntime":       "aligntime is not supported",
	"sep":             "sep is not supported; series of several aggregates are named <aggregate>:<value>",
	"format":          "format is not supported; series of several aggregates are named <aggregate>:<value>",
	"agg":             "agg is not supported; name the aggregate explicitly",
	"start":           "start is not supported",
	"end":             "end is not supported",
	"consecutive":     "consecutive is not supported",
	"keepevents":      "keepevents is not supported",
	"sortby":          "sortby is not supported; use sort before dedup",
	"keeplast":        "keeplast is not supported",
	"null":            "null is not supported",
	"allnum":          "allnum is not supported",
	"delim":           "delim is not supported",
	"partitions":      "partitions is not supported",
	"dedup_splitvals": "dedup_splitvals is not supported",
}

var commandTable map[string]*commandSpec

func init() {
	cmds := []*commandSpec{
		{Name: "search", Synopsis: "search <search-expression>", First: true, Later: true, parse: (*parser).parseSearchCmd},
		{Name: "where", Synopsis: "where <eval-expression>", Later: true, parse: (*parser).parseWhere},
		{Name: "eval", Synopsis: "eval <field>=<eval-expression> [, <field>=<eval-expression>]...", Later: true, parse: (*parser).parseEval},
		{Name: "fields", Synopsis: "fields [+] <field-pattern> [, <field-pattern>]...", Later: true, parse: (*parser).parseFields},
		{Name: "table", Synopsis: "table <field-pattern> [, <field-pattern>]...", Later: true, Transforming: true, parse: (*parser).parseTable},
		{Name: "rename", Synopsis: "rename <field-pattern> AS <field-pattern> [, ...]", Later: true, parse: (*parser).parseRename},
		{Name: "stats", Synopsis: "stats <aggregate> [AS <name>] [, ...] [BY <field> [, <field>]...]", Later: true, Transforming: true, parse: (*parser).parseStats},
		{Name: "chart", Synopsis: "chart [options] <aggregate> [AS <name>] [, ...] [OVER <field>] [BY <field>] | chart ... BY <field> <field>", Later: true, Transforming: true, Options: chartOptions, parse: (*parser).parseChart},
		{Name: "timechart", Synopsis: "timechart [options] <aggregate> [AS <name>] [, ...] [BY <field>] [options]", Later: true, Transforming: true, NeedsTime: true, Options: timechartOptions, parse: (*parser).parseTimechart},
		{Name: "sort", Synopsis: "sort [<count>] [+|-]<field> | num(<field>) | str(<field>) | auto(<field>) [, ...] [desc]", Later: true, parse: (*parser).parseSort},
		{Name: "head", Synopsis: "head [<count>]", Later: true, parse: (*parser).parseHead},
		{Name: "mvexpand", Synopsis: "mvexpand <multivalue-field>", Later: true, parse: (*parser).parseMvexpand},
		{Name: "dedup", Synopsis: "dedup [<count>] <field> [, <field>]... [keepempty=<bool>]", Later: true, Options: dedupOptions, parse: (*parser).parseDedup},
	}
	commandTable = make(map[string]*commandSpec, len(cmds))
	for _, c := range cmds {
		commandTable[c.Name] = c
	}
}

// aggArg says what an aggregate accepts between its parentheses.
type aggArg uint8

const (
	aggArgField    aggArg = iota // f(field)
	aggArgOptional               // count or count(field) or count(eval(...))
)

// aggSpec describes an aggregate function of stats, chart and timechart.
type aggSpec struct {
	Name        string // canonical
	Aliases     []string
	Arg         aggArg
	Description string
}

var aggTable = []aggSpec{
	{"count", []string{"c"}, aggArgOptional, "number of rows; count(field) counts rows where field is not null; count(eval(condition)) counts rows where the condition is true"},
	{"dc", []string{"distinct_count"}, aggArgField, "exact number of distinct values (compared as text)"},
	{"sum", nil, aggArgField, "sum of numeric values and numeric strings"},
	{"avg", []string{"mean"}, aggArgField, "average of numeric values and numeric strings"},
	{"min", nil, aggArgField, "smallest numeric value, or the lexicographically smallest text when no value is numeric"},
	{"max", nil, aggArgField, "largest numeric value, or the lexicographically largest text when no value is numeric"},
	{"values", nil, aggArgField, "distinct values as text, in lexicographic order"},
	{"earliest", nil, aggArgField, "value at the earliest _time among rows where the field is not null"},
	{"latest", nil, aggArgField, "value at the latest _time among rows where the field is not null"},
}

// lookupAgg finds an aggregate by name or alias, case-insensitively.
func lookupAgg(name string) (*aggSpec, bool) {
	n := strings.ToLower(name)
	for i := range aggTable {
		a := &aggTable[i]
		if a.Name == n {
			return a, true
		}
		for _, al := range a.Aliases {
			if al == n {
				return a, true
			}
		}
	}
	return nil, false
}

// Eval operator precedences, lowest first. The parser climbs on them and
// the printer parenthesises with them.
const (
	precXor   = 1
	precOr    = 2
	precAnd   = 3
	precNot   = 4
	precEq    = 5 // = == != LIKE IN
	precRel   = 6 // < <= > >=
	precAdd   = 7 // + - .
	precMul   = 8 // * / %
	precUnary = 9 // unary -
	precAtom  = 10
)

// binaryOpSpec is an eval binary operator.
type binaryOpSpec struct {
	Text        string // canonical spelling (word operators upper case)
	Prec        int
	Description string
}

var binaryOpTable = []binaryOpSpec{
	{"XOR", precXor, "logical exclusive or"},
	{"OR", precOr, "logical or"},
	{"AND", precAnd, "logical and"},
	{"=", precEq, "equal: numeric when both sides are numbers or numeric strings, otherwise text"},
	{"==", precEq, "same as ="},
	{"!=", precEq, "not equal"},
	{"LIKE", precEq, "SQL LIKE pattern on text: % any run, _ one character"},
	{"IN", precEq, "x IN (a, b, ...): equal to one of the values"},
	{"<", precRel, "less than (numeric or text, as for =)"},
	{"<=", precRel, "less than or equal"},
	{">", precRel, "greater than"},
	{">=", precRel, "greater than or equal"},
	{"+", precAdd, "numeric addition"},
	{"-", precAdd, "numeric subtraction"},
	{".", precAdd, "text concatenation"},
	{"*", precMul, "numeric multiplication"},
	{"/", precMul, "numeric division; division by zero is null"},
	{"%", precMul, "numeric remainder; by zero is null"},
}

var unaryOpTable = []binaryOpSpec{
	{"NOT", precNot, "logical not"},
	{"-", precUnary, "numeric negation"},
}

func lookupBinaryOp(text string) (*binaryOpSpec, bool) {
	for i := range binaryOpTable {
		if binaryOpTable[i].Text == text {
			return &binaryOpTable[i], true
		}
	}
	return nil, false
}

// searchOperatorTable describes the operators of the search language.
var searchOperatorTable = []struct{ Text, Description string }{
	{"=", "field equals value: case-insensitive, * wildcards, numeric values also match numerically"},
	{"!=", "field exists and does not equal value"},
	{"<", "less than: numeric when the value is a number, otherwise text"},
	{"<=", "less than or equal"},
	{">", "greater than"},
	{">=", "greater than or equal"},
	{"IN", "field IN (v1, v2, ...): equals one of the values"},
	{"NOT", "negation; NOT field=value also matches rows without the field"},
	{"OR", "either; binds tighter than AND"},
	{"AND", "both; also written by juxtaposition"},
}

// keywordTable lists reserved words. AND, OR, NOT and IN are upper case in
// the search language; in expressions word operators are case-insensitive.
var keywordTable = []string{"AND", "OR", "NOT", "XOR", "IN", "LIKE", "AS", "BY", "OVER"}

// literalTable describes literal forms.
var literalTable = []struct{ Kind, Syntax, Description string }{
	{"number", "12, -3, 1.5, .5, 2e3", "numbers are 64-bit floating point in expressions"},
	{"string", `"text", "with \"quote\""`, "double-quoted text; backslash escapes a quote or a backslash"},
	{"field", "status, user.id, 'odd name'", "a bare name (dots address nested JSON) or a single-quoted name"},
	{"boolean", "true(), false()", "boolean values are produced by functions and comparisons; eval cannot assign one to a field"},
	{"null", "null()", "the absent value"},
	{"search term", `error, err*, "connection refused"`, "case-insensitive whole-token match on _raw; * matches any characters"},
	{"time bound", "1700000000, now, -15m, -2h, -7d, -1w, -1mon, -1y", "earliest and latest request fields"},
}

// spanUnit is a unit of timechart span and of relative time bounds.
type spanUnit struct {
	Unit    string
	Aliases []string
	Seconds int64
}

var spanUnitTable = []spanUnit{
	{"s", []string{"sec", "secs", "second", "seconds"}, 1},
	{"m", []string{"min", "mins", "minute", "minutes"}, 60},
	{"h", []string{"hr", "hrs", "hour", "hours"}, 3600},
	{"d", []string{"day", "days"}, 86400},
	{"w", []string{"week", "weeks"}, 7 * 86400},
}

// calendarUnitTable holds units valid only in relative time bounds.
var calendarUnitTable = []struct {
	Unit    string
	Aliases []string
	Months  int
}{
	{"mon", []string{"month", "months"}, 1},
	{"y", []string{"yr", "yrs", "year", "years"}, 12},
}

func lookupSpanUnit(u string) (*spanUnit, bool) {
	u = strings.ToLower(u)
	for i := range spanUnitTable {
		s := &spanUnitTable[i]
		if s.Unit == u {
			return s, true
		}
		for _, a := range s.Aliases {
			if a == u {
				return s, true
			}
		}
	}
	return nil, false
}

// builtinField is a typed path of logsearch_events.
type builtinField struct {
	Name, Type, Description string
}

var builtinFieldTable = []builtinField{
	{"_time", "DateTime64(3, 'UTC')", "event time; the table is sorted by it"},
	{"_raw", "String", "raw event text; search terms match it"},
	{"host", "String", "host that produced the event"},
	{"source", "String", "source of the event"},
	{"sourcetype", "String", "type of the source"},
	{"index", "String", "index name"},
}

func isBuiltinField(name string) bool {
	for _, b := range builtinFieldTable {
		if b.Name == name {
			return true
		}
	}
	return false
}

// timeModifierFields are search-time modifiers of Splunk that this service
// takes from the request instead.
var timeModifierFields = map[string]bool{
	"earliest": true, "latest": true, "_index_earliest": true, "_index_latest": true,
	"starttime": true, "endtime": true, "starttimeu": true, "endtimeu": true,
	"hoursago": true, "minutesago": true, "daysago": true, "timeformat": true,
	"searchtimespanhours": true, "searchtimespanminutes": true, "searchtimespandays": true,
}

func sortedCommandNames() []string {
	names := make([]string, 0, len(commandTable))
	for n := range commandTable {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
