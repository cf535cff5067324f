package promread

import (
	"errors"
	"testing"

	"github.com/prometheus/prometheus/promql"
)

func TestBudgetChargesQueryAndOrganization(t *testing.T) {
	org := NewBudget("organization", 100, nil)
	q1 := NewBudget("query", 60, org)
	q2 := NewBudget("query", 60, org)
	var read promql.ErrTooManySamplesRead
	if err := q1.charge(50); err != nil {
		t.Fatal(err)
	}
	// Over its own budget: refused, nothing charged anywhere.
	if err := q1.charge(20); !errors.As(err, &read) {
		t.Fatalf("query over budget: %v", err)
	}
	if q1.Used() != 50 || org.Used() != 50 {
		t.Fatalf("after a refusal: query %d, organization %d", q1.Used(), org.Used())
	}
	// Within its own but over the organization's: refused, nothing charged.
	if err := q2.charge(40); err != nil {
		t.Fatal(err)
	}
	if err := q2.charge(20); !errors.As(err, &read) || q2.Used() != 40 || org.Used() != 90 {
		t.Fatalf("organization over budget: %v; query %d, organization %d", err, q2.Used(), org.Used())
	}
	q1.Release()
	if org.Used() != 40 {
		t.Fatalf("after release: organization %d", org.Used())
	}
	if err := q2.charge(20); err != nil {
		t.Fatalf("after the other query ended: %v", err)
	}
	var nilBudget *Budget
	if err := nilBudget.charge(1 << 40); err != nil {
		t.Fatal(err)
	}
}
