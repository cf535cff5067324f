package spl

import "sort"

// Manifest is the static description of the language served by
// GET /v1/spl/capabilities. It is built from the tables the parser and the
// compiler dispatch on, so it cannot drift from what they accept.
type Manifest struct {
	Language      string           `json:"language"`
	Commands      []CommandInfo    `json:"commands"`
	Functions     FunctionsInfo    `json:"functions"`
	Operators     OperatorsInfo    `json:"operators"`
	Keywords      []string         `json:"keywords"`
	Literals      []LiteralInfo    `json:"literals"`
	SpanUnits     []SpanUnitInfo   `json:"span_units"`
	TimeUnits     []TimeUnitInfo   `json:"time_units"`
	BuiltinFields []FieldInfo      `json:"built_in_fields"`
	Limits        []LimitInfo      `json:"limits"`
	Unsupported   []UnsupportedOpt `json:"unsupported_options"`
}

// CommandInfo describes a command and where it may appear.
type CommandInfo struct {
	Name     string `json:"name"`
	Synopsis string `json:"synopsis"`
	// Positions: "first" (the base search) and/or "after_pipe".
	Positions []string `json:"positions"`
	// Transforming commands turn events into a statistics table (the
	// search then returns statistics, no timeline, no field statistics).
	Transforming bool `json:"transforming"`
	// RequiresTime: the rows entering the command must have _time.
	RequiresTime bool         `json:"requires_time"`
	Options      []OptionInfo `json:"options"`
}

// OptionInfo describes a name=value option.
type OptionInfo struct {
	Name        string `json:"name"`
	Values      string `json:"values"`
	Default     string `json:"default,omitempty"`
	Description string `json:"description"`
}

// FunctionsInfo lists eval functions and aggregates.
type FunctionsInfo struct {
	Eval      []FunctionInfo  `json:"eval"`
	Aggregate []AggregateInfo `json:"aggregate"`
}

// FunctionInfo describes an eval function.
type FunctionInfo struct {
	Name        string `json:"name"`
	Signature   string `json:"signature"`
	MinArgs     int    `json:"min_args"`
	MaxArgs     int    `json:"max_args"` // -1: any number
	Description string `json:"description"`
}

// AggregateInfo describes an aggregate of stats, chart and timechart.
type AggregateInfo struct {
	Name        string   `json:"name"`
	Aliases     []string `json:"aliases"`
	Argument    string   `json:"argument"` // "field" or "optional"
	Description string   `json:"description"`
}

// OperatorsInfo lists the operators of both sub-languages.
type OperatorsInfo struct {
	Search []OperatorInfo `json:"search"`
	Eval   []OperatorInfo `json:"eval"`
}

// OperatorInfo describes an operator; Precedence is higher for tighter
// binding (eval operators only).
type OperatorInfo struct {
	Operator    string `json:"operator"`
	Precedence  int    `json:"precedence,omitempty"`
	Unary       bool   `json:"unary,omitempty"`
	Description string `json:"description"`
}

// LiteralInfo describes a literal form.
type LiteralInfo struct {
	Kind        string `json:"kind"`
	Syntax      string `json:"syntax"`
	Description string `json:"description"`
}

// SpanUnitInfo is a unit of timechart span and relative time bounds.
type SpanUnitInfo struct {
	Unit    string   `json:"unit"`
	Aliases []string `json:"aliases"`
	Seconds int64    `json:"seconds"`
}

// TimeUnitInfo is a calendar unit valid only in relative time bounds.
type TimeUnitInfo struct {
	Unit    string   `json:"unit"`
	Aliases []string `json:"aliases"`
	Months  int      `json:"months"`
}

// FieldInfo is a built-in field of logsearch_events.
type FieldInfo struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
}

// LimitInfo is a compiler or result limit.
type LimitInfo struct {
	Name        string `json:"name"`
	Value       int64  `json:"value"`
	Description string `json:"description"`
}

// UnsupportedOpt is a recognised Splunk option this service rejects.
type UnsupportedOpt struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Capabilities returns the language manifest.
func Capabilities() *Manifest {
	m := &Manifest{Language: "spl", Keywords: append([]string(nil), keywordTable...)}
	for _, name := range sortedCommandNames() {
		c := commandTable[name]
		ci := CommandInfo{Name: c.Name, Synopsis: c.Synopsis, Transforming: c.Transforming, RequiresTime: c.NeedsTime, Options: []OptionInfo{}}
		if c.First {
			ci.Positions = append(ci.Positions, "first")
		}
		if c.Later {
			ci.Positions = append(ci.Positions, "after_pipe")
		}
		for _, o := range c.Options {
			ci.Options = append(ci.Options, OptionInfo(o))
		}
		m.Commands = append(m.Commands, ci)
	}
	names := make([]string, 0, len(funcTable))
	for n := range funcTable {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := funcTable[n]
		m.Functions.Eval = append(m.Functions.Eval, FunctionInfo{Name: f.Name, Signature: f.Signature, MinArgs: f.Min, MaxArgs: f.Max, Description: f.Description})
	}
	for _, a := range aggTable {
		arg := "field"
		if a.Arg == aggArgOptional {
			arg = "optional"
		}
		m.Functions.Aggregate = append(m.Functions.Aggregate, AggregateInfo{Name: a.Name, Aliases: append([]string{}, a.Aliases...), Argument: arg, Description: a.Description})
	}
	for _, o := range searchOperatorTable {
		m.Operators.Search = append(m.Operators.Search, OperatorInfo{Operator: o.Text, Description: o.Description})
	}
	for _, o := range binaryOpTable {
		m.Operators.Eval = append(m.Operators.Eval, OperatorInfo{Operator: o.Text, Precedence: o.Prec, Description: o.Description})
	}
	for _, o := range unaryOpTable {
		m.Operators.Eval = append(m.Operators.Eval, OperatorInfo{Operator: o.Text, Precedence: o.Prec, Unary: true, Description: o.Description})
	}
	for _, l := range literalTable {
		m.Literals = append(m.Literals, LiteralInfo(l))
	}
	for _, u := range spanUnitTable {
		m.SpanUnits = append(m.SpanUnits, SpanUnitInfo{Unit: u.Unit, Aliases: append([]string{}, u.Aliases...), Seconds: u.Seconds})
	}
	for _, u := range calendarUnitTable {
		m.TimeUnits = append(m.TimeUnits, TimeUnitInfo{Unit: u.Unit, Aliases: append([]string{}, u.Aliases...), Months: u.Months})
	}
	for _, f := range builtinFieldTable {
		m.BuiltinFields = append(m.BuiltinFields, FieldInfo(f))
	}
	for _, l := range limitTable {
		m.Limits = append(m.Limits, LimitInfo{Name: l.Name, Value: l.Value, Description: l.Description})
	}
	opts := make([]string, 0, len(unsupportedOptions))
	for n := range unsupportedOptions {
		opts = append(opts, n)
	}
	sort.Strings(opts)
	for _, n := range opts {
		m.Unsupported = append(m.Unsupported, UnsupportedOpt{Name: n, Reason: unsupportedOptions[n]})
	}
	return m
}
