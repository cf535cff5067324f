package spl

import (
	"context"
	"strings"
	"testing"
)

func TestNumericPathsReadTyped(t *testing.T) {
	p, err := Parse("search status>=500 | where status < 600 | stats sum(bytes) AS b, values(user) AS u")
	if err != nil {
		t.Fatal(err)
	}
	opts := goldenOptions("")
	opts.Paths = map[string][]string{"bytes": {"Int64"}, "status": {"Float64", "Int64"}, "user": {"String"}}
	plan, err := Compile(context.Background(), p, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"dynamicElement(doc.`bytes`, 'Int64') AS `@bytes`", "CAST(doc.`status` AS Nullable(Float64)) AS `@status`", "doc.`user` AS `@user`"} {
		if !strings.Contains(plan.SQL, want) {
			t.Errorf("plan lacks %s:\n%s", want, plan.SQL)
		}
	}
	if !strings.Contains(plan.SQL, "(CAST(doc.`status` AS Nullable(Float64)) >= 500.0)") {
		t.Errorf("the base search does not read status typed:\n%s", plan.SQL)
	}
	if strings.Contains(plan.SQL, "CAST(`@bytes` AS Nullable(String))") {
		t.Errorf("a typed number goes through text:\n%s", plan.SQL)
	}
}
