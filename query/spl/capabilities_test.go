package spl

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestCapabilitiesGolden keeps the published manifest under review.
func TestCapabilitiesGolden(t *testing.T) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Capabilities()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "testdata/capabilities.json", b.String())
}

// TestCapabilitiesMatchCompiler checks that everything the manifest lists
// is accepted, and that what it does not list is rejected.
func TestCapabilitiesMatchCompiler(t *testing.T) {
	m := Capabilities()
	compile := func(src string) error {
		p, err := Parse(src)
		if err != nil {
			return err
		}
		opts := goldenOptions("")
		opts.Paths = map[string][]string{"items": {"Array(JSON(max_dynamic_types=16, max_dynamic_paths=256))"}, "items[].sku": {"String"}}
		_, err = Compile(context.Background(), p, opts)
		return err
	}
	examples := map[string]string{
		"search": "a | search b", "where": "a | where x=1", "eval": "a | eval x=1", "fields": "a | fields x",
		"table": "a | table x", "rename": "a | rename x AS y", "stats": "a | stats count", "chart": "a | chart count BY x y",
		"timechart": "a | timechart count", "sort": "a | sort x", "head": "a | head 1", "dedup": "a | dedup x",
		"mvexpand": "a | mvexpand items{}.sku",
	}
	if len(examples) != len(m.Commands) {
		t.Fatalf("manifest has %d commands, test knows %d", len(m.Commands), len(examples))
	}
	for _, c := range m.Commands {
		src, ok := examples[c.Name]
		if !ok {
			t.Fatalf("command %s has no example", c.Name)
		}
		if err := compile(src); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
		for _, o := range c.Options {
			v := strings.TrimSpace(strings.Split(o.Values, "|")[0])
			switch o.Name {
			case "span":
				v = "1h"
			case "limit", "bins":
				v = "5"
			}
			if err := compile(src + " " + o.Name + "=" + v); err != nil {
				t.Errorf("%s option %s=%s: %v", c.Name, o.Name, v, err)
			}
		}
	}
	if err := compile("a | bogus"); err == nil {
		t.Error("unknown command accepted")
	}
	for _, f := range m.Functions {
		if f.Kind != "eval" {
			continue
		}
		args := make([]string, f.MinArgs)
		for i := range args {
			args[i] = "x"
			if i > 0 {
				args[i] = `"a"`
			}
		}
		if f.Name == "if" || f.Name == "case" {
			args[0] = "x=1"
		}
		if f.Name == "round" && len(args) > 1 {
			args[1] = "1"
		}
		expr := f.Name + "(" + strings.Join(args, ", ") + ")"
		src := "a | eval y=" + expr
		switch f.Name {
		case "match", "like", "isnull", "isnotnull", "isnum", "isint", "isstr", "true", "false":
			src = "a | where " + expr
		case "case":
			src = `a | eval y=case(x=1, "a")`
		}
		if err := compile(src); err != nil {
			t.Errorf("function %s: %v", f.Name, err)
		}
	}
	for _, a := range m.Functions {
		if a.Kind != "aggregate" {
			continue
		}
		for _, n := range append([]string{a.Name}, a.Aliases...) {
			if err := compile("a | stats " + n + "(x)"); err != nil {
				t.Errorf("aggregate %s: %v", n, err)
			}
		}
	}
	for _, u := range m.SpanUnitDetails {
		for _, n := range append([]string{u.Unit}, u.Aliases...) {
			if _, err := parseSpan("1" + n); err != nil {
				t.Errorf("span unit %s: %v", n, err)
			}
		}
	}
	if len(m.Functions) != len(funcTable)+len(aggTable) || len(m.Limits) != len(limitTable) || len(m.TimechartSpanUnits) != len(spanUnitTable) {
		t.Error("manifest and tables disagree in size")
	}
	for _, o := range m.Unsupported {
		if err := compile("a | timechart " + o.Name + "=1 count"); err == nil {
			t.Errorf("unsupported option %s accepted", o.Name)
		}
	}
}
