package statement

import "strings"

// Scalar functions are allowed unless they reach outside the tenant or the
// machine. The engine has more than a thousand functions, so this is a
// deny-list of the ones that read other tables, dictionaries, files, models or
// server configuration, or reveal the host; every table-valued access is
// decided elsewhere (FROM sources are an allow-list). Names are compared
// case-insensitively, which refuses more than the engine's exact names.
var deniedFunctions = map[string]string{
	// other tables by name
	"joinget":          "reads a Join table by name",
	"joingetornull":    "reads a Join table by name",
	"hascolumnintable": "inspects other tables by name",
	// files and models on the server
	"file":                 "reads server files",
	"catboostevaluate":     "reads model files",
	"modelevaluate":        "reads model files",
	"naivebayesclassifier": "reads server models",
	// server configuration and identity
	"getmacro":               "reveals server configuration",
	"getserversetting":       "reveals server configuration",
	"getserversettings":      "reveals server configuration",
	"getmergetreesetting":    "reveals server configuration",
	"getclienthttpheader":    "reveals request headers",
	"showcertificate":        "reveals the server certificate",
	"hostname":               "reveals the host",
	"fqdn":                   "reveals the host",
	"displayname":            "reveals the host",
	"tcpport":                "reveals the host",
	"getserverport":          "reveals the host",
	"serveruuid":             "reveals the host",
	"getoskernelversion":     "reveals the host",
	"filesystemavailable":    "reveals the host",
	"filesystemcapacity":     "reveals the host",
	"filesystemunreserved":   "reveals the host",
	"zookeepersessionuptime": "reveals the host",
	"shardnum":               "reveals the cluster layout",
	"shardcount":             "reveals the cluster layout",
	"globalvariable":         "reveals server state",
	"currentuser":            "reveals engine users",
	"user":                   "reveals engine users",
	"current_user":           "reveals engine users",
	"currentroles":           "reveals engine roles",
	"current_roles":          "reveals engine roles",
	"enabledroles":           "reveals engine roles",
	"enabled_roles":          "reveals engine roles",
	"defaultroles":           "reveals engine roles",
	"currentprofiles":        "reveals engine profiles",
	"enabledprofiles":        "reveals engine profiles",
	"defaultprofiles":        "reveals engine profiles",
	"currentschemas":         "reveals engine databases",
	"current_schemas":        "reveals engine databases",
	// introspection (disabled by default in the engine; refused regardless)
	"addresstoline":            "introspection",
	"addresstolinewithinlines": "introspection",
	"addresstosymbol":          "introspection",
	"demangle":                 "introspection",
	"trace":                    "introspection",
	"logtrace":                 "introspection",
	"__getscalar":              "internal function",
	"__bitboolmaskor":          "internal function",
	"__bitboolmaskand":         "internal function",
	"__bitwrapperfunc":         "internal function",
	"__applyfilter":            "internal function",
	"__actionname":             "internal function",
	"__scalarsubqueryresult":   "internal function",
	"globalinignoreset":        "internal function",
	"globalnotinignoreset":     "internal function",
	"innullaspectsignoreset":   "internal function",
	"inignoreset":              "internal function",
	"notinignoreset":           "internal function",
	"nullinignoreset":          "internal function",
	"notnullinignoreset":       "internal function",
	"globalnullinignoreset":    "internal function",
	"globalnotnullinignoreset": "internal function",
	"getscalar":                "internal function",
}

// deniedFunction returns why function name is refused, or "".
func deniedFunction(name string) string {
	l := strings.ToLower(name)
	if strings.HasPrefix(l, "dict") {
		return "reads dictionaries"
	}
	if why, ok := deniedFunctions[l]; ok && why != "" {
		return why
	}
	return ""
}

// currentDatabaseFunctions return the current database; they are rewritten
// to the logical name, since the engine's answer would be an engine name.
func isCurrentDatabaseFunction(name string) bool {
	switch strings.ToLower(name) {
	case "currentdatabase", "database", "current_database", "schema":
		return true
	}
	return false
}

// dateUnitFunctions take an unquoted interval unit as first argument
// (dateAdd(day, 1, ts)); that identifier is a keyword, not a path.
var dateUnitFunctions = map[string]bool{
	"dateadd": true, "date_add": true, "timestampadd": true, "timestamp_add": true,
	"datesub": true, "date_sub": true, "timestampsub": true, "timestamp_sub": true,
	"datediff": true, "date_diff": true, "timestampdiff": true, "timestamp_diff": true,
	"age": true, "datetrunc": true, "date_trunc": true,
}

var intervalUnits = map[string]bool{
	"nanosecond": true, "microsecond": true, "millisecond": true, "second": true, "minute": true,
	"hour": true, "day": true, "week": true, "month": true, "quarter": true, "year": true,
	"ns": true, "us": true, "ms": true, "ss": true, "s": true, "mi": true, "n": true, "hh": true,
	"h": true, "dd": true, "d": true, "wk": true, "ww": true, "mm": true, "m": true, "qq": true,
	"q": true, "yyyy": true, "yy": true,
	"nanoseconds": true, "microseconds": true, "milliseconds": true, "seconds": true, "minutes": true,
	"hours": true, "days": true, "weeks": true, "months": true, "quarters": true, "years": true,
}

// aggregateFunctions are refused in row policy filters and sorting keys
// (scalar contexts). The list covers the common ones; the engine rejects the
// rest itself.
var aggregateBase = []string{
	"count", "sum", "avg", "min", "max", "any", "anylast", "anyheavy", "argmin", "argmax",
	"uniq", "uniqexact", "uniqcombined", "uniqcombined64", "uniqhll12", "uniqtheta",
	"grouparray", "groupuniqarray", "grouparraysorted", "groupbitand", "groupbitor", "groupbitxor",
	"groupbitmap", "quantile", "quantiles", "quantileexact", "quantiletdigest", "quantiletiming",
	"median", "stddevpop", "stddevsamp", "varpop", "varsamp", "covarpop", "covarsamp", "corr",
	"topk", "topkweighted", "summap", "minmap", "maxmap", "histogram", "windowfunnel", "retention",
	"sequencematch", "sequencecount", "simplelinearregression", "stochasticlinearregression",
	"entropy", "skewpop", "skewsamp", "kurtpop", "kurtsamp", "first_value", "last_value",
	"row_number", "rank", "dense_rank", "lag", "lead", "laginframe", "leadinframe", "nth_value",
	"ntile", "percent_rank", "cume_dist", "summapwithoverflow", "sumwithoverflow", "sumkahan",
	"avgweighted", "boundingratio", "deltasum", "exponentialmovingaverage", "grouparrayinsertat",
	"grouparraymovingsum", "grouparraymovingavg", "maxintersections", "mannwhitneyutest",
	"studentttest", "welchttest", "rankcorr", "contingency", "cramersv", "theilsu", "sparkbar",
	"singlevalueornull", "largesttrianglethreebuckets", "flamegraph", "groupconcat",
}

var aggregateCombinators = []string{
	"if", "array", "map", "state", "merge", "mergestate", "foreach", "ordefault", "ornull",
	"resample", "distinct", "simplestate", "argmin", "argmax",
}

func isAggregateFunction(name string) bool {
	l := strings.ToLower(name)
	for {
		for _, b := range aggregateBase {
			if l == b {
				return true
			}
		}
		trimmed := false
		for _, c := range aggregateCombinators {
			if len(l) > len(c) && strings.HasSuffix(l, c) {
				l = l[:len(l)-len(c)]
				trimmed = true
				break
			}
		}
		if !trimmed {
			return false
		}
	}
}

// inFunctions are the function forms of IN, whose second argument the
// engine may read as a table name.
var inFunctions = map[string]bool{
	"in": true, "notin": true, "globalin": true, "globalnotin": true,
	"nullin": true, "notnullin": true, "globalnullin": true, "globalnotnullin": true,
}
