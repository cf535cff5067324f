package spl

// The AST is closed: every node type is declared in this file and carries
// the unexported node method, Children is the single switch over all of
// them, and Walk/Inspect are built on Children.

// Node is any node of a parsed search.
type Node interface {
	// Range is the source range of the node.
	Range() PosRange
	// String renders the node as SPL that parses back to an equal node.
	String() string
	node()
}

// Pipeline is a whole search: the base search then the piped commands.
type Pipeline struct {
	Commands []Command
	Rng      PosRange
	src      string // the parsed text, for stage expressions and errors
}

// Command is one pipeline segment.
type Command interface {
	Node
	// Name is the command name, e.g. "stats"; the base search is "search".
	Name() string
	// Segment is the range of the whole segment and ArgsStart the offset
	// where its arguments start (after the command name).
	segment() (seg PosRange, argsStart Pos)
}

// cmdBase holds what every command has in common.
type cmdBase struct {
	Rng  PosRange // the whole segment, command name included
	Args Pos      // start of the arguments
}

func (c *cmdBase) Range() PosRange          { return c.Rng }
func (c *cmdBase) segment() (PosRange, Pos) { return c.Rng, c.Args }
func (*cmdBase) node()                      {}

// SearchCommand is the base search (first segment) or a later `search`.
type SearchCommand struct {
	cmdBase
	// Explicit is true when the segment was written with the search keyword.
	Explicit bool
	// Expr is nil for an empty base search (every event in the window).
	Expr SearchExpr
}

// WhereCommand filters rows with an eval expression.
type WhereCommand struct {
	cmdBase
	Cond Expr
}

// EvalCommand assigns fields, left to right.
type EvalCommand struct {
	cmdBase
	Assignments []*Assignment
}

// FieldsCommand keeps only the listed fields (positive form only).
type FieldsCommand struct {
	cmdBase
	Plus   bool // written as `fields + a, b`
	Fields []*FieldName
}

// TableCommand turns events into a table of the listed fields.
type TableCommand struct {
	cmdBase
	Fields []*FieldName
}

// MvexpandCommand makes a row per value of a multivalue field (items{}.sku).
type MvexpandCommand struct {
	cmdBase
	Field *FieldName
}

// RenameCommand renames fields, left to right.
type RenameCommand struct {
	cmdBase
	Pairs []*RenamePair
}

// StatsCommand aggregates rows, optionally grouped by fields.
type StatsCommand struct {
	cmdBase
	Aggs []*Aggregate
	By   []*FieldName
}

// ChartCommand aggregates rows over one field, split into series by another.
type ChartCommand struct {
	cmdBase
	Options []*Option
	Aggs    []*Aggregate
	Over    *FieldName // nil when absent
	By      *FieldName // split field, nil when absent
	// ByForm is true when the fields were written `BY a b` (or `BY a`)
	// rather than `OVER a BY b`; only String uses it.
	ByForm bool
}

// TimechartCommand aggregates rows over time buckets, optionally split.
type TimechartCommand struct {
	cmdBase
	Options []*Option
	Aggs    []*Aggregate
	By      *FieldName
}

// SortCommand orders rows.
type SortCommand struct {
	cmdBase
	Limit *Int // nil: no limit
	Keys  []*SortKey
}

// HeadCommand keeps the first N rows in the current order.
type HeadCommand struct {
	cmdBase
	Count *Int // nil: the default, 10
}

// DedupCommand keeps the first Count rows for each combination of values.
type DedupCommand struct {
	cmdBase
	Count     *Int // nil: 1
	Fields    []*FieldName
	KeepEmpty *Option // keepempty=<bool>, nil when absent
}

func (*SearchCommand) Name() string    { return "search" }
func (*WhereCommand) Name() string     { return "where" }
func (*EvalCommand) Name() string      { return "eval" }
func (*FieldsCommand) Name() string    { return "fields" }
func (*TableCommand) Name() string     { return "table" }
func (*RenameCommand) Name() string    { return "rename" }
func (*StatsCommand) Name() string     { return "stats" }
func (*ChartCommand) Name() string     { return "chart" }
func (*TimechartCommand) Name() string { return "timechart" }
func (*SortCommand) Name() string      { return "sort" }
func (*HeadCommand) Name() string      { return "head" }
func (*DedupCommand) Name() string     { return "dedup" }
func (*MvexpandCommand) Name() string  { return "mvexpand" }

// Int is an integer argument with its position.
type Int struct {
	Value int64
	Rng   PosRange
}

// FieldName is a field name or, where allowed, a wildcard pattern.
type FieldName struct {
	Name   string
	Quoted bool // written in quotes
	Rng    PosRange
}

// Assignment is `name = expr` in eval.
type Assignment struct {
	Field *FieldName
	X     Expr
	Rng   PosRange
}

// RenamePair is `from AS to`.
type RenamePair struct {
	From, To *FieldName
	Rng      PosRange
}

// Aggregate is an aggregate call such as `avg(bytes) AS b`,
// `count(eval(status>=500))` or `count`.
type Aggregate struct {
	Func  string     // canonical lower-case name as written (dc, distinct_count, ...)
	Field *FieldName // argument field, nil for bare count and for Eval
	Eval  Expr       // argument of count(eval(...)), nil otherwise
	Alias *FieldName // AS alias, nil when absent
	Rng   PosRange
}

// Option is `name=value` of chart, timechart and dedup.
type Option struct {
	Name  string // lower case
	Value string
	Rng   PosRange
}

// SortKey is one key of sort.
type SortKey struct {
	Field *FieldName
	Desc  bool
	Mode  string // "", "auto", "num" or "str"
	Rng   PosRange
}

// SearchExpr is an expression of the search language.
type SearchExpr interface {
	Node
	searchExpr()
}

// SearchBoolOp is AND or OR.
type SearchBoolOp uint8

const (
	SearchAnd SearchBoolOp = iota
	SearchOr
)

// SearchBinary is `L AND R` (also written by juxtaposition) or `L OR R`.
type SearchBinary struct {
	Op   SearchBoolOp
	L, R SearchExpr
	Rng  PosRange
}

// SearchNot is `NOT X`.
type SearchNot struct {
	X   SearchExpr
	Rng PosRange
}

// SearchTerm is a bare or quoted term matched against _raw.
type SearchTerm struct {
	Text   string
	Quoted bool
	Rng    PosRange
}

// CompareOp is a comparison operator of the search language.
type CompareOp uint8

const (
	OpEq CompareOp = iota
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
)

var compareOpText = [...]string{OpEq: "=", OpNe: "!=", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">="}

func (o CompareOp) String() string { return compareOpText[o] }

// SearchValue is the right side of a search comparison.
type SearchValue struct {
	Text   string
	Quoted bool
	Rng    PosRange
}

// SearchCompare is `field op value`.
type SearchCompare struct {
	Field *FieldName
	Op    CompareOp
	Value *SearchValue
	Rng   PosRange
}

// SearchIn is `field IN (v1, v2, ...)`.
type SearchIn struct {
	Field  *FieldName
	Values []*SearchValue
	Rng    PosRange
}

func (*SearchBinary) searchExpr()  {}
func (*SearchNot) searchExpr()     {}
func (*SearchTerm) searchExpr()    {}
func (*SearchCompare) searchExpr() {}
func (*SearchIn) searchExpr()      {}

// Expr is an expression of the eval language (eval, where, count(eval())).
type Expr interface {
	Node
	expr()
}

// FieldRef is a field read: `status`, `user.id`, `'odd name'`.
type FieldRef struct {
	Name   string
	Quoted bool
	Rng    PosRange
}

// StringLit is a double-quoted string.
type StringLit struct {
	Value string
	Rng   PosRange
}

// NumberLit is a number as written.
type NumberLit struct {
	Text string
	Rng  PosRange
}

// UnaryExpr is `NOT X` or `-X`.
type UnaryExpr struct {
	Op  string // "NOT" or "-"
	X   Expr
	Rng PosRange
}

// BinaryExpr is `L op R`; Op is the canonical operator text of the
// operator table (upper case for word operators).
type BinaryExpr struct {
	Op   string
	L, R Expr
	Rng  PosRange
}

// InExpr is `X IN (a, b, ...)`.
type InExpr struct {
	X    Expr
	List []Expr
	Rng  PosRange
}

// CallExpr is a function call; Func is lower case.
type CallExpr struct {
	Func string
	Args []Expr
	Rng  PosRange
}

func (*FieldRef) expr()   {}
func (*StringLit) expr()  {}
func (*NumberLit) expr()  {}
func (*UnaryExpr) expr()  {}
func (*BinaryExpr) expr() {}
func (*InExpr) expr()     {}
func (*CallExpr) expr()   {}

func (n *Pipeline) Range() PosRange      { return n.Rng }
func (n *Int) Range() PosRange           { return n.Rng }
func (n *FieldName) Range() PosRange     { return n.Rng }
func (n *Assignment) Range() PosRange    { return n.Rng }
func (n *RenamePair) Range() PosRange    { return n.Rng }
func (n *Aggregate) Range() PosRange     { return n.Rng }
func (n *Option) Range() PosRange        { return n.Rng }
func (n *SortKey) Range() PosRange       { return n.Rng }
func (n *SearchBinary) Range() PosRange  { return n.Rng }
func (n *SearchNot) Range() PosRange     { return n.Rng }
func (n *SearchTerm) Range() PosRange    { return n.Rng }
func (n *SearchValue) Range() PosRange   { return n.Rng }
func (n *SearchCompare) Range() PosRange { return n.Rng }
func (n *SearchIn) Range() PosRange      { return n.Rng }
func (n *FieldRef) Range() PosRange      { return n.Rng }
func (n *StringLit) Range() PosRange     { return n.Rng }
func (n *NumberLit) Range() PosRange     { return n.Rng }
func (n *UnaryExpr) Range() PosRange     { return n.Rng }
func (n *BinaryExpr) Range() PosRange    { return n.Rng }
func (n *InExpr) Range() PosRange        { return n.Rng }
func (n *CallExpr) Range() PosRange      { return n.Rng }

func (*Pipeline) node()      {}
func (*Int) node()           {}
func (*FieldName) node()     {}
func (*Assignment) node()    {}
func (*RenamePair) node()    {}
func (*Aggregate) node()     {}
func (*Option) node()        {}
func (*SortKey) node()       {}
func (*SearchBinary) node()  {}
func (*SearchNot) node()     {}
func (*SearchTerm) node()    {}
func (*SearchValue) node()   {}
func (*SearchCompare) node() {}
func (*SearchIn) node()      {}
func (*FieldRef) node()      {}
func (*StringLit) node()     {}
func (*NumberLit) node()     {}
func (*UnaryExpr) node()     {}
func (*BinaryExpr) node()    {}
func (*InExpr) node()        {}
func (*CallExpr) node()      {}

// Children returns the direct children of n in source order. It is the one
// place that knows the shape of every node; Walk and Inspect use it.
func Children(n Node) []Node {
	var out []Node
	add := func(c Node) {
		// Typed nil pointers in optional fields are skipped.
		switch c := c.(type) {
		case nil:
			return
		case *FieldName:
			if c == nil {
				return
			}
		case *Int:
			if c == nil {
				return
			}
		case *Option:
			if c == nil {
				return
			}
		}
		out = append(out, c)
	}
	switch n := n.(type) {
	case *Pipeline:
		for _, c := range n.Commands {
			add(c)
		}
	case *SearchCommand:
		if n.Expr != nil {
			add(n.Expr)
		}
	case *WhereCommand:
		add(n.Cond)
	case *EvalCommand:
		for _, a := range n.Assignments {
			add(a)
		}
	case *FieldsCommand:
		for _, f := range n.Fields {
			add(f)
		}
	case *TableCommand:
		for _, f := range n.Fields {
			add(f)
		}
	case *MvexpandCommand:
		add(n.Field)
	case *RenameCommand:
		for _, p := range n.Pairs {
			add(p)
		}
	case *StatsCommand:
		for _, a := range n.Aggs {
			add(a)
		}
		for _, f := range n.By {
			add(f)
		}
	case *ChartCommand:
		for _, o := range n.Options {
			add(o)
		}
		for _, a := range n.Aggs {
			add(a)
		}
		add(n.Over)
		add(n.By)
	case *TimechartCommand:
		for _, o := range n.Options {
			add(o)
		}
		for _, a := range n.Aggs {
			add(a)
		}
		add(n.By)
	case *SortCommand:
		add(n.Limit)
		for _, k := range n.Keys {
			add(k)
		}
	case *HeadCommand:
		add(n.Count)
	case *DedupCommand:
		add(n.Count)
		for _, f := range n.Fields {
			add(f)
		}
		add(n.KeepEmpty)
	case *Assignment:
		add(n.Field)
		add(n.X)
	case *RenamePair:
		add(n.From)
		add(n.To)
	case *Aggregate:
		add(n.Field)
		if n.Eval != nil {
			add(n.Eval)
		}
		add(n.Alias)
	case *SortKey:
		add(n.Field)
	case *SearchBinary:
		add(n.L)
		add(n.R)
	case *SearchNot:
		add(n.X)
	case *SearchCompare:
		add(n.Field)
		add(n.Value)
	case *SearchIn:
		add(n.Field)
		for _, v := range n.Values {
			add(v)
		}
	case *UnaryExpr:
		add(n.X)
	case *BinaryExpr:
		add(n.L)
		add(n.R)
	case *InExpr:
		add(n.X)
		for _, e := range n.List {
			add(e)
		}
	case *CallExpr:
		for _, e := range n.Args {
			add(e)
		}
	case *Int, *FieldName, *Option, *SearchTerm, *SearchValue, *FieldRef, *StringLit, *NumberLit:
		// leaves
	default:
		panic("spl: Children: unknown node type")
	}
	return out
}

// Visitor is called by Walk for each node; the returned visitor is used for
// the children, nil stops the descent.
type Visitor interface {
	Visit(n Node) Visitor
}

// Walk traverses n depth-first in source order.
func Walk(v Visitor, n Node) {
	if v = v.Visit(n); v == nil {
		return
	}
	for _, c := range Children(n) {
		Walk(v, c)
	}
}

type inspector func(Node) bool

func (f inspector) Visit(n Node) Visitor {
	if f(n) {
		return f
	}
	return nil
}

// Inspect calls f for n and its descendants depth-first; f returning false
// skips the node's children.
func Inspect(n Node, f func(Node) bool) { Walk(inspector(f), n) }
