package statement

// Kind is the classification of a statement: the statement kinds the query API
// supports (POST /v1/query in edge/openapi.json).
type Kind uint8

// Statement kinds.
const (
	KindSelect Kind = iota + 1 // SELECT or WITH ... SELECT
	KindExplain
	KindDescribe
	KindInsertSelect
	KindCreateTable
	KindAlterSortingKey
	KindCreateRole
	KindDropRole
	KindGrant
	KindCreateRowPolicy
	KindDropRowPolicy
	KindCreateWorkload
	KindDropWorkload
	KindCreateResource
	KindDropResource
	KindCreateSettingsProfile
	KindDropSettingsProfile
)

var kindNames = [...]string{
	KindSelect:                "select",
	KindExplain:               "explain",
	KindDescribe:              "describe",
	KindInsertSelect:          "insert_select",
	KindCreateTable:           "create_table",
	KindAlterSortingKey:       "alter_sorting_key",
	KindCreateRole:            "create_role",
	KindDropRole:              "drop_role",
	KindGrant:                 "grant",
	KindCreateRowPolicy:       "create_row_policy",
	KindDropRowPolicy:         "drop_row_policy",
	KindCreateWorkload:        "create_workload",
	KindDropWorkload:          "drop_workload",
	KindCreateResource:        "create_resource",
	KindDropResource:          "drop_resource",
	KindCreateSettingsProfile: "create_settings_profile",
	KindDropSettingsProfile:   "drop_settings_profile",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// IsRead reports whether the statement only reads (SELECT, EXPLAIN,
// DESCRIBE).
func (k Kind) IsRead() bool { return k == KindSelect || k == KindExplain || k == KindDescribe }

// Statement is the analyzed, authorized and rewritten statement.
//
// Exactly one of SQL and Command is set: SQL is engine SQL to run with
// Settings (reads, INSERT ... SELECT, workload and resource DDL); Command is
// a control-plane change the caller applies through its own machinery
// (tables, sorting keys, roles, grants, row policies, settings profiles).
type Statement struct {
	Kind    Kind
	SQL     string
	Command Command
	// Reads and Writes are the tables touched, with logical and engine
	// names. System views appear in Reads with Database "system".
	Reads  []TableRef
	Writes []TableRef
	// Settings are to be sent with the engine request (query settings of
	// the HTTP interface), in order. A SETTINGS clause inside SQL overrides
	// them where the statement was allowed to.
	Settings []Setting
	// EmptyResult: the response is an empty result set (DDL, INSERT ...
	// SELECT).
	EmptyResult bool
	// RowPolicies names the row policies injected into the reads, as
	// "db.table.policy".
	RowPolicies []string
	// NeedsGeneration (INSERT ... SELECT only): the target table has no
	// storage generation yet, so SQL is empty. Source is the verified query
	// producing the documents (one column, doc), from which the caller types
	// the first generation's key before analyzing the statement again.
	NeedsGeneration bool
	Source          string
	// DynamicPaths are the paths read as Dynamic in a table with a path schema
	// (typing.go), to explain engine type errors.
	DynamicPaths []DynamicPath
	// TypedPaths are the paths read typed, to explain type errors of functions.
	TypedPaths []TypedPath
	// CountsHidden: the engine's read counts would reveal rows the caller may
	// not see (row policies, system views over every tenant's objects); report
	// only what the statement returned (counts.go).
	CountsHidden bool
	// Hints are notes for the answer's hints (JSON formats): a max_threads
	// lowered to the cluster size's cores.
	Hints []string
}

// TableRef names a table both ways.
type TableRef struct {
	Database       string // logical database, or "system"
	Table          string // logical table
	EngineDatabase string
	EngineTable    string // for writes, the generation t__g<n>
}

// Setting is one engine setting with its plain value.
type Setting struct {
	Name  string
	Value string
}

// Command is a structured control-plane statement.
type Command interface{ command() }

// CreateTable creates table Database.Table with the logical sorting key
// SortingKey (comma-separated SQL expressions, empty for automatic).
type CreateTable struct {
	Database    string
	Table       string
	SortingKey  string
	IfNotExists bool
}

// AlterSortingKey replaces the sorting key of Database.Table.
type AlterSortingKey struct {
	Database   string
	Table      string
	SortingKey string
}

// CreateRole creates a role of the organization.
type CreateRole struct {
	Name        string
	IfNotExists bool
	OnCluster   bool // explicit ON CLUSTER 'default'
}

// DropRole drops a role and removes its grants from the keys using it.
type DropRole struct {
	Name      string
	IfExists  bool
	OnCluster bool
}

// GrantPrivileges adds Grants (one per role and privilege).
type GrantPrivileges struct {
	Grants    []Grant
	OnCluster bool
}

// CreateRowPolicy creates or replaces Policy.
type CreateRowPolicy struct {
	Policy      RowPolicy
	IfNotExists bool
	OrReplace   bool
	OnCluster   bool
}

// DropRowPolicy drops policy Name on Database.Table.
type DropRowPolicy struct {
	Name      string
	Database  string
	Table     string
	IfExists  bool
	OnCluster bool
}

// CreateSettingsProfile creates or replaces Profile.
type CreateSettingsProfile struct {
	Profile     SettingsProfile
	IfNotExists bool
	OrReplace   bool
	OnCluster   bool
}

// DropSettingsProfile drops profile Name.
type DropSettingsProfile struct {
	Name      string
	IfExists  bool
	OnCluster bool
}

func (*CreateTable) command()           {}
func (*AlterSortingKey) command()       {}
func (*CreateRole) command()            {}
func (*DropRole) command()              {}
func (*GrantPrivileges) command()       {}
func (*CreateRowPolicy) command()       {}
func (*DropRowPolicy) command()         {}
func (*CreateSettingsProfile) command() {}
func (*DropSettingsProfile) command()   {}
