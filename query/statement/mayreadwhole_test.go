package statement

import "testing"

func TestMayReadWhole(t *testing.T) {
	access := &StaticAccess{
		Roles: []string{"whole", "cols", "filtered", "other"},
		GrantSet: []Grant{
			{Role: "whole", Privileges: PrivSelect, Database: "default", Table: "prometheus_data"},
			{Role: "cols", Privileges: PrivSelect, Database: "default", Table: "prometheus_data", Columns: []string{"id"}},
			{Role: "filtered", Privileges: PrivSelect, Database: "*", Table: "*"},
			{Role: "other", Privileges: PrivInsert, Database: "default", Table: "prometheus_data"},
			{Role: "dropped", Privileges: PrivSelect, Database: "*", Table: "*"},
		},
		Policies: []RowPolicy{{Name: "p", Database: "default", Table: "prometheus_data", Filter: "1", Roles: []string{"filtered"}}},
	}
	f := func(p Principal, want bool) {
		t.Helper()
		if got := MayReadWhole(p, access, "default", "prometheus_data"); got != want {
			t.Errorf("%+v: %v, want %v", p, got, want)
		}
	}
	f(KeyWithPermission(PermReadOnly), true)
	f(KeyWithPermission(PermWriteOnly), false)
	f(Member(false), true)
	f(KeyWithRoles("whole"), true)
	f(KeyWithRoles("cols"), false)     // a column grant does not cover whole rows
	f(KeyWithRoles("filtered"), false) // a row policy PromQL cannot apply
	f(KeyWithRoles("other"), false)    // INSERT is not SELECT
	f(KeyWithRoles("dropped"), false)  // a dropped role grants nothing
	f(KeyWithRoles("cols", "whole"), true)
}
