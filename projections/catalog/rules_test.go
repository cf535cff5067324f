package catalog_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
)

// bootstrapped opens a fresh catalog with the bootstrap organization and cluster.
func bootstrapped(t *testing.T) (*catalog.Service, *catalog.Bootstrap) {
	t.Helper()
	svc, closeStore := open(t, filepath.Join(t.TempDir(), "events.db"))
	t.Cleanup(closeStore)
	b, err := svc.EnsureBootstrap(context.Background(), catalog.BootstrapConfig{Organization: "acme", Token: "svck_rules_test_token_0123"})
	if err != nil {
		t.Fatal(err)
	}
	return svc, b
}

// TestDatabaseAndTableRules checks the command rules of the database aggregate, each
// against the error callers branch on.
func TestDatabaseAndTableRules(t *testing.T) {
	ctx := context.Background()
	svc, b := bootstrapped(t)
	org, cl := b.Organization.ID, b.Cluster.ID
	is := func(name string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	var fe *catalog.FieldError
	if _, err := svc.CreateDatabase(ctx, org, cl, "bad name", nil); !errors.As(err, &fe) || fe.Field != "name" {
		t.Errorf("invalid database name: %v", err)
	}
	if _, err := svc.CreateDatabase(ctx, org, cl, "a__b", nil); !errors.As(err, &fe) {
		t.Errorf("a name with __ (engine names would collide): %v", err)
	}
	_, err := svc.CreateDatabase(ctx, org, cl, catalog.SystemDatabase, nil)
	is("the system database", err, catalog.ErrExists)
	_, err = svc.CreateDatabase(ctx, uuid.New(), cl, "other_org", nil)
	is("a cluster of another organization", err, catalog.ErrNotFound)
	if _, err := svc.CreateDatabase(ctx, org, cl, "sales", nil); err != nil {
		t.Fatal(err)
	}
	_, err = svc.CreateDatabase(ctx, org, cl, "sales", nil)
	is("a second database of one name", err, catalog.ErrExists)
	is("deleting default", svc.DeleteDatabase(ctx, cl, catalog.DefaultDatabase), catalog.ErrProtected)
	is("deleting a missing database", svc.DeleteDatabase(ctx, cl, "nope"), catalog.ErrNotFound)

	_, err = svc.CreateTable(ctx, catalog.NewTable{Cluster: cl, Database: "nope", Name: "t"})
	is("a table in a missing database", err, catalog.ErrNotFound)
	tbl, err := svc.CreateTable(ctx, catalog.NewTable{Cluster: cl, Database: "sales", Name: "orders"})
	if err != nil || tbl.ColumnType != "JSON" {
		t.Fatalf("create table: %+v %v", tbl, err)
	}
	_, err = svc.CreateTable(ctx, catalog.NewTable{Cluster: cl, Database: "sales", Name: "orders"})
	is("a second table of one name", err, catalog.ErrExists)

	// Sorting keys: set, kept when unchanged, never removed once set.
	if _, err := svc.ChangeSortingKey(ctx, cl, "sales", "orders", "user.id"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ChangeSortingKey(ctx, cl, "sales", "orders", ""); !errors.As(err, &fe) || fe.Field != "sorting_key" {
		t.Errorf("removing a sorting key: %v", err)
	}
	_, err = svc.ChangeSortingKey(ctx, cl, "sales", "missing", "a")
	is("the key of a missing table", err, catalog.ErrNotFound)

	// Generations come in order, and creating one again is a no-op (racing nodes agree).
	if _, err := svc.CreateGeneration(ctx, tbl.ID, 2, "user.id", "doc.user.id.:Int64", ""); err == nil {
		t.Error("generation 2 before generation 1 was accepted")
	}
	if _, err := svc.CreateGeneration(ctx, tbl.ID, 1, "user.id", "doc.user.id.:Int64", ""); err != nil {
		t.Fatal(err)
	}
	got, err := svc.CreateGeneration(ctx, tbl.ID, 1, "other", "doc.other.:String", "")
	if g, ok := got.Current(); err != nil || !ok || g.N != 1 || len(got.Generations) != 1 {
		t.Errorf("creating generation 1 again: %+v %v", got, err)
	}
	_, err = svc.CreateGeneration(ctx, uuid.New(), 1, "", "", "")
	is("a generation of a missing table", err, catalog.ErrNotFound)

	// Deleting a database takes its tables with it, and its name can be used again.
	if err := svc.DeleteDatabase(ctx, cl, "sales"); err != nil {
		t.Fatal(err)
	}
	if _, ok := svc.Model().TableByID(tbl.ID); ok {
		t.Error("a table of a deleted database is still in the model")
	}
	if _, err := svc.CreateDatabase(ctx, org, cl, "sales", nil); err != nil {
		t.Errorf("re-creating a deleted database: %v", err)
	}
	_, err = svc.DeleteTable(ctx, cl, "sales", "orders")
	is("the table of the deleted database", err, catalog.ErrNotFound)
}

// TestRoleRules checks IF [NOT] EXISTS on roles.
func TestRoleRules(t *testing.T) {
	ctx := context.Background()
	svc, b := bootstrapped(t)
	cl := b.Cluster.ID
	if err := svc.CreateRole(ctx, cl, "analyst", false); err != nil {
		t.Fatal(err)
	}
	if err := svc.CreateRole(ctx, cl, "analyst", false); !errors.Is(err, catalog.ErrExists) {
		t.Errorf("a second role of one name: %v", err)
	}
	if err := svc.CreateRole(ctx, cl, "analyst", true); err != nil {
		t.Errorf("IF NOT EXISTS: %v", err)
	}
	if err := svc.DropRole(ctx, cl, "nobody", false); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("dropping a missing role: %v", err)
	}
	if err := svc.DropRole(ctx, cl, "nobody", true); err != nil {
		t.Errorf("IF EXISTS: %v", err)
	}
	if err := svc.DropRole(ctx, cl, "analyst", false); err != nil {
		t.Fatal(err)
	}
	if err := svc.CreateRole(ctx, cl, "analyst", false); err != nil {
		t.Errorf("re-creating a dropped role: %v", err)
	}
}

// TestAPIKeyRules checks what a key may be made of: exactly one of a permission and
// database roles, roles that exist, a future expiry, a cluster of the key's organization,
// a token no other key has; the token itself is kept only as its hash.
func TestAPIKeyRules(t *testing.T) {
	ctx := context.Background()
	svc, b := bootstrapped(t)
	org, cl := b.Organization.ID, b.Cluster.ID
	if err := svc.CreateRole(ctx, cl, "analyst", false); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute)
	refused := func(name, field string, k catalog.NewAPIKey) {
		t.Helper()
		k.OrgID, k.ClusterID = org, cl
		var fe *catalog.FieldError
		if _, _, err := svc.CreateAPIKey(ctx, k); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v, want a field error on %s", name, err, field)
		}
	}
	refused("no name", "name", catalog.NewAPIKey{Permission: catalog.PermReadOnly})
	refused("a long name", "name", catalog.NewAPIKey{Name: strings.Repeat("k", 257), Permission: catalog.PermReadOnly})
	refused("neither permission nor roles", "permission", catalog.NewAPIKey{Name: "k"})
	refused("both permission and roles", "permission", catalog.NewAPIKey{Name: "k", Permission: catalog.PermReadOnly, Roles: []string{"analyst"}})
	refused("an unknown permission", "permission", catalog.NewAPIKey{Name: "k", Permission: "superuser"})
	refused("a missing role", "database_roles", catalog.NewAPIKey{Name: "k", Roles: []string{"nobody"}})
	refused("a role in another case", "database_roles", catalog.NewAPIKey{Name: "k", Roles: []string{"Analyst"}})
	refused("a role twice", "database_roles", catalog.NewAPIKey{Name: "k", Roles: []string{"analyst", "analyst"}})
	refused("an expiry in the past", "expires_at", catalog.NewAPIKey{Name: "k", Permission: catalog.PermReadOnly, ExpiresAt: &past})
	refused("the bootstrap key's token", "token", catalog.NewAPIKey{Name: "k", Permission: catalog.PermReadOnly, Token: "svck_rules_test_token_0123"})
	if _, _, err := svc.CreateAPIKey(ctx, catalog.NewAPIKey{OrgID: uuid.New(), ClusterID: cl, Name: "k", Permission: catalog.PermReadOnly}); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("a cluster of another organization: %v", err)
	}

	k, token, err := svc.CreateAPIKey(ctx, catalog.NewAPIKey{OrgID: org, ClusterID: cl, Name: "reader", Roles: []string{"analyst"}})
	if err != nil {
		t.Fatal(err)
	}
	if k.TokenHash != catalog.HashToken(token) || k.TokenHint != catalog.TokenHint(token) || strings.Contains(k.TokenHint, token) {
		t.Errorf("token %q kept as hash %q, hint %q", token, k.TokenHash, k.TokenHint)
	}
	if k.DefaultDatabase != catalog.DefaultDatabase || k.Expired(time.Now()) {
		t.Errorf("defaults: %+v", k)
	}
	if got, ok := svc.Model().APIKeyByHash(catalog.HashToken(token)); !ok || got.ID != k.ID {
		t.Errorf("the key by its token: %+v %v", got, ok)
	}
	if err := svc.DeleteAPIKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := svc.Model().APIKeyByHash(catalog.HashToken(token)); ok {
		t.Error("a deleted key still authenticates")
	}
	if err := svc.DeleteAPIKey(ctx, k.ID); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("deleting a deleted key: %v", err)
	}
}

// TestAccessDefinitionRules checks grants, row policies and settings profiles: grants
// need a live role; CREATE keeps, replaces or refuses an existing definition as IF NOT
// EXISTS and OR REPLACE say; a dropped role leaves nothing behind for a role created
// later under its name.
func TestAccessDefinitionRules(t *testing.T) {
	ctx := context.Background()
	svc, b := bootstrapped(t)
	org, cl := b.Organization.ID, b.Cluster.ID
	is := func(name string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	sel := catalog.Grant{Privileges: []string{"SELECT"}, Database: "default", Table: "events"}
	is("a grant to a missing role", svc.GrantToRole(ctx, cl, "analyst", sel), catalog.ErrNotFound)
	if err := svc.CreateRole(ctx, cl, "analyst", false); err != nil {
		t.Fatal(err)
	}
	if err := svc.GrantToRole(ctx, cl, "analyst", sel, catalog.Grant{Privileges: []string{"INSERT"}, Database: "default", Table: "events"}); err != nil {
		t.Fatal(err)
	}
	if g := svc.Model().Grants(cl, "analyst"); len(g) != 2 || g[0].Privileges[0] != "SELECT" || g[1].Privileges[0] != "INSERT" {
		t.Errorf("grants: %+v", g)
	}

	policy := func(filter string) catalog.RowPolicy {
		return catalog.RowPolicy{Name: "own", Database: "default", Table: "events", Filter: filter, Roles: []string{"analyst"}}
	}
	filter := func() string {
		t.Helper()
		ps := svc.Model().RowPolicies(cl)
		if len(ps) != 1 {
			t.Fatalf("row policies: %+v", ps)
		}
		return ps[0].Filter
	}
	if err := svc.CreateRowPolicy(ctx, cl, policy("a = 1"), false, false); err != nil {
		t.Fatal(err)
	}
	is("a second policy of one name", svc.CreateRowPolicy(ctx, cl, policy("a = 2"), false, false), catalog.ErrExists)
	if err := svc.CreateRowPolicy(ctx, cl, policy("a = 2"), true, false); err != nil || filter() != "a = 1" {
		t.Errorf("IF NOT EXISTS on an existing policy (kept unchanged): %v, filter %q", err, filter())
	}
	if err := svc.CreateRowPolicy(ctx, cl, policy("a = 3"), false, true); err != nil || filter() != "a = 3" {
		t.Errorf("OR REPLACE: %v, filter %q", err, filter())
	}
	p2 := policy("b = 1")
	p2.Table = "other"
	if err := svc.CreateRowPolicy(ctx, cl, p2, false, false); err != nil {
		t.Errorf("a policy of one name on another table: %v", err)
	}
	if err := svc.CreateSettingsProfile(ctx, cl, catalog.SettingsProfile{Name: "slow", Roles: []string{"analyst", "writer"},
		Settings: []catalog.ProfileSetting{{Name: "max_threads", Value: "1"}}}, false, false); err != nil {
		t.Fatal(err)
	}
	is("a second profile of one name", svc.CreateSettingsProfile(ctx, cl, catalog.SettingsProfile{Name: "slow"}, false, false), catalog.ErrExists)
	k, _, err := svc.CreateAPIKey(ctx, catalog.NewAPIKey{OrgID: org, ClusterID: cl, Name: "analyst key", Roles: []string{"analyst"}})
	if err != nil {
		t.Fatal(err)
	}

	// Dropping the role takes its name out of grants, policies, profiles and keys; a role
	// created again under the name starts with nothing.
	if err := svc.DropRole(ctx, cl, "analyst", false); err != nil {
		t.Fatal(err)
	}
	if err := svc.CreateRole(ctx, cl, "analyst", false); err != nil {
		t.Fatal(err)
	}
	if g := svc.Model().Grants(cl, "analyst"); len(g) != 0 {
		t.Errorf("the grants of a dropped role of the name: %+v", g)
	}
	for _, p := range svc.Model().RowPolicies(cl) {
		if len(p.Roles) != 0 {
			t.Errorf("policy %s.%s.%s still names %v", p.Database, p.Table, p.Name, p.Roles)
		}
	}
	if ps := svc.Model().SettingsProfiles(cl); len(ps) != 1 || len(ps[0].Roles) != 1 || ps[0].Roles[0] != "writer" {
		t.Errorf("profiles: %+v", ps)
	}
	if got, _ := svc.Model().APIKey(k.ID); len(got.Roles) != 0 {
		t.Errorf("the key still names %v", got.Roles)
	}

	// Drops: a missing definition is an error unless IF EXISTS; a dropped one can be made again.
	if err := svc.DropRowPolicy(ctx, cl, "default", "events", "own", false); err != nil {
		t.Fatal(err)
	}
	is("dropping a dropped policy", svc.DropRowPolicy(ctx, cl, "default", "events", "own", false), catalog.ErrNotFound)
	if err := svc.DropRowPolicy(ctx, cl, "default", "events", "own", true); err != nil {
		t.Errorf("IF EXISTS: %v", err)
	}
	if err := svc.CreateRowPolicy(ctx, cl, policy("a = 4"), false, false); err != nil {
		t.Errorf("re-creating a dropped policy: %v", err)
	}
	is("dropping a missing profile", svc.DropSettingsProfile(ctx, cl, "fast", false), catalog.ErrNotFound)
	if err := svc.DropSettingsProfile(ctx, cl, "slow", false); err != nil {
		t.Fatal(err)
	}
	if ps := svc.Model().SettingsProfiles(cl); len(ps) != 0 {
		t.Errorf("profiles after the drop: %+v", ps)
	}
}

// TestGenerationResorts: a re-sort changes the physical key of its generation only and
// counts; a table deleted since takes none.
func TestGenerationResorts(t *testing.T) {
	ctx := context.Background()
	svc, b := bootstrapped(t)
	cl := b.Cluster.ID
	tbl, err := svc.CreateTable(ctx, catalog.NewTable{Cluster: cl, Database: catalog.DefaultDatabase, Name: "events"})
	if err != nil {
		t.Fatal(err)
	}
	for n, key := range []string{"doc.a.:Int64", "doc.b.:Int64"} {
		if _, err := svc.CreateGeneration(ctx, tbl.ID, n+1, "k", key, ""); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := svc.ResortedGeneration(ctx, tbl.ID, 1, "doc.c.:Int64"); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := svc.Model().TableByID(tbl.ID)
	if g := got.Generations; len(g) != 2 || g[0].PhysicalKey != "doc.c.:Int64" || g[0].Resorts != 2 || g[1].PhysicalKey != "doc.b.:Int64" || g[1].Resorts != 0 {
		t.Errorf("generations after two re-sorts of the first: %+v", g)
	}
	if _, err := svc.DeleteTable(ctx, cl, catalog.DefaultDatabase, "events"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, catalog.NewTable{Cluster: cl, Database: catalog.DefaultDatabase, Name: "events"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.ResortedGeneration(ctx, tbl.ID, 1, "doc.d.:Int64"); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("re-sorting a deleted table: %v", err)
	}
}
