package spl

import "sort"

// Manifest is the static description of the language served by
// GET /v1/spl/capabilities. It is built from the tables the parser and the
// compiler dispatch on, so it cannot drift from what they accept. The
// first members are the published contract; the *_details members add
// aliases, precedences, types and descriptions.
type Manifest struct {
	Language           string           `json:"language"`
	Commands           []CommandInfo    `json:"commands"`
	Functions          []FunctionInfo   `json:"functions"`
	Operators          []string         `json:"operators"`
	Keywords           []string         `json:"keywords"`
	Literals           []LiteralInfo    `json:"literals"`
	TimechartSpanUnits []string         `json:"timechart_span_units"`
	BuiltinFields      []string         `json:"built_in_fields"`
	Limits             map[string]int64 `json:"limits"`

	OperatorDetails     OperatorsInfo     `json:"operator_details"`
	SpanUnitDetails     []SpanUnitInfo    `json:"span_unit_details"`
	TimeUnits           []TimeUnitInfo    `json:"time_window_calendar_units"`
	BuiltinFieldDetails []FieldInfo       `json:"built_in_field_details"`
	LimitDescriptions   map[string]string `json:"limit_descriptions"`
	Unsupported         []UnsupportedOpt  `json:"unsupported_options"`
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

// FunctionInfo describes an eval function or an aggregate.
type FunctionInfo struct {
	Name string `json:"name"`
	// Kind is "eval" (eval, where) or "aggregate" (stats, chart, timechart).
	Kind      string   `json:"kind"`
	Aliases   []string `json:"aliases"`
	Signature string   `json:"signature"`
	MinArgs   int      `json:"min_args"`
	MaxArgs   int      `json:"max_args"` // -1: any number
	// Argument of an aggregate: "field", or "optional" for count.
	Argument    string `json:"argument,omitempty"`
	Description string `json:"description"`
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
	m := &Manifest{Language: "spl", Keywords: append([]string(nil), keywordTable...),
		Limits: map[string]int64{}, LimitDescriptions: map[string]string{}}
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
		m.Functions = append(m.Functions, FunctionInfo{Name: f.Name, Kind: "eval", Aliases: []string{}, Signature: f.Signature,
			MinArgs: f.Min, MaxArgs: f.Max, Description: f.Description})
	}
	for _, a := range aggTable {
		fi := FunctionInfo{Name: a.Name, Kind: "aggregate", Aliases: append([]string{}, a.Aliases...), Signature: a.Name + "(<field>)",
			MinArgs: 1, MaxArgs: 1, Argument: "field", Description: a.Description}
		if a.Arg == aggArgOptional {
			fi.Signature, fi.MinArgs, fi.Argument = a.Name+" | "+a.Name+"(<field>) | "+a.Name+"(eval(<condition>))", 0, "optional"
		}
		m.Functions = append(m.Functions, fi)
	}
	seen := map[string]bool{}
	op := func(s string) {
		if !seen[s] {
			seen[s] = true
			m.Operators = append(m.Operators, s)
		}
	}
	for _, o := range searchOperatorTable {
		m.OperatorDetails.Search = append(m.OperatorDetails.Search, OperatorInfo{Operator: o.Text, Description: o.Description})
		op(o.Text)
	}
	for _, o := range binaryOpTable {
		m.OperatorDetails.Eval = append(m.OperatorDetails.Eval, OperatorInfo{Operator: o.Text, Precedence: o.Prec, Description: o.Description})
		op(o.Text)
	}
	for _, o := range unaryOpTable {
		m.OperatorDetails.Eval = append(m.OperatorDetails.Eval, OperatorInfo{Operator: o.Text, Precedence: o.Prec, Unary: true, Description: o.Description})
		op(o.Text)
	}
	for _, l := range literalTable {
		m.Literals = append(m.Literals, LiteralInfo(l))
	}
	for _, u := range spanUnitTable {
		m.TimechartSpanUnits = append(m.TimechartSpanUnits, u.Unit)
		m.SpanUnitDetails = append(m.SpanUnitDetails, SpanUnitInfo{Unit: u.Unit, Aliases: append([]string{}, u.Aliases...), Seconds: u.Seconds})
	}
	for _, u := range calendarUnitTable {
		m.TimeUnits = append(m.TimeUnits, TimeUnitInfo{Unit: u.Unit, Aliases: append([]string{}, u.Aliases...), Months: u.Months})
	}
	for _, f := range builtinFieldTable {
		m.BuiltinFields = append(m.BuiltinFields, f.Name)
		m.BuiltinFieldDetails = append(m.BuiltinFieldDetails, FieldInfo(f))
	}
	for _, l := range limitTable {
		m.Limits[l.Name] = l.Value
		m.LimitDescriptions[l.Name] = l.Description
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
