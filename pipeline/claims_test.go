package pipeline

import (
	"testing"

	"github.com/google/uuid"
	"github.com/svc-data/svc/query/target"
)

type fakeHomes struct {
	tables map[uuid.UUID]target.Home
	dbs    map[string]target.Home
}

func (f fakeHomes) TableHome(id uuid.UUID) (target.Home, bool) { h, ok := f.tables[id]; return h, ok }
func (f fakeHomes) DatabaseHome(db string) (target.Home, bool) { h, ok := f.dbs[db]; return h, ok }

func TestCheckClaim(t *testing.T) {
	mine, theirs := uuid.New(), uuid.New()
	myOrg, theirOrg := uuid.New(), uuid.New()
	myTable, theirTable := uuid.New(), uuid.New()
	homes := fakeHomes{
		tables: map[uuid.UUID]target.Home{
			myTable:    {Cluster: mine, Org: myOrg, Database: "o_mine__db"},
			theirTable: {Cluster: theirs, Org: theirOrg, Database: "o_theirs__db"},
		},
		dbs: map[string]target.Home{
			"o_mine__db":   {Cluster: mine, Org: myOrg, Database: "o_mine__db"},
			"o_theirs__db": {Cluster: theirs, Org: theirOrg, Database: "o_theirs__db"},
		},
	}
	f := func(table, db string, org uuid.UUID, format string, want claim) {
		t.Helper()
		r := &Record{Headers: map[string]string{HeaderTable: table, HeaderDatabase: db, HeaderOrg: org.String(), HeaderFormat: format}}
		if got := checkClaim(homes, mine, r); got != want {
			t.Errorf("checkClaim(table %s, db %s, org %s, %s) = %d, want %d", table, db, org, format, got, want)
		}
	}
	f(myTable.String(), "o_mine__db", myOrg, FormatNDJSON, claimHeld)
	// Another cluster's table, with its own headers copied, or with this cluster's.
	f(theirTable.String(), "o_theirs__db", theirOrg, FormatNDJSON, claimForged)
	f(theirTable.String(), "o_mine__db", myOrg, FormatNDJSON, claimForged)
	// This cluster's table under another database or organization.
	f(myTable.String(), "o_theirs__db", myOrg, FormatNDJSON, claimForged)
	f(myTable.String(), "o_mine__db", theirOrg, FormatNDJSON, claimForged)
	f(uuid.NewString(), "o_mine__db", myOrg, FormatNDJSON, claimMissing)
	f("not a table id", "o_mine__db", myOrg, FormatNDJSON, claimHeld) // skipped by groupByTable
	// Prometheus records name a database; their table id derives from it.
	f(PrometheusTableID("o_mine__db").String(), "o_mine__db", myOrg, FormatPrometheus, claimHeld)
	f(PrometheusTableID("o_theirs__db").String(), "o_theirs__db", theirOrg, FormatPrometheus, claimForged)
	f(PrometheusTableID("o_theirs__db").String(), "o_mine__db", myOrg, FormatPrometheus, claimForged)
	f(PrometheusTableID("o_mine__db").String(), "o_mine__db", theirOrg, FormatPrometheus, claimForged)
	f(PrometheusTableID("system").String(), "system", myOrg, FormatPrometheus, claimMissing)
}
