package query

import (
	"fmt"

	"github.com/google/uuid"
)

// MaxQueryIDLen bounds a caller's query id.
const MaxQueryIDLen = 128

// CheckQueryID validates a query id a caller chose: 1 to 128 characters of letters,
// digits, '.', '_', ':' and '-'. The empty id is valid where one is generated.
func CheckQueryID(id string) error {
	bad := len(id) > MaxQueryIDLen
	for i := 0; i < len(id) && !bad; i++ {
		c := id[i]
		bad = !(c == '.' || c == '_' || c == ':' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
	}
	if bad {
		return &Error{Status: 400, Code: "invalid_query_id", Field: "query_id",
			Message: fmt.Sprintf("query_id must be 1 to %d characters of letters, digits, '.', '_', ':' and '-'", MaxQueryIDLen),
			Hint:    "omit query_id to get a generated one"}
	}
	return nil
}

// EngineQueryID is the id a caller's query runs with on the engine. Ids are the
// caller's within an organization and database: two organizations may use the same
// id at once, on one engine too, and neither sees or cancels the other's query.
func EngineQueryID(org uuid.UUID, database, id string) string {
	return org.String() + "." + database + "." + id
}

// runKey is a running query's key in the node's registry.
func runKey(cluster, org uuid.UUID, database, id string) string {
	return cluster.String() + "/" + EngineQueryID(org, database, id)
}
