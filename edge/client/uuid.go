package client

import openapi_types "github.com/oapi-codegen/runtime/types"

// UUID is the type of the API's id path parameters, named here so that programs using
// the SDK need not import the generator's runtime.
type UUID = openapi_types.UUID

// ParseUUID reads an id in its text form.
func ParseUUID(s string) (UUID, error) {
	var id UUID
	err := id.UnmarshalText([]byte(s))
	return id, err
}
