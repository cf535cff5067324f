package catalog

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// Reserved logical database names.
const (
	DefaultDatabase = "default"
	SystemDatabase  = "system"
)

// ValidateName checks a logical database or table name: 1 to 64 characters of
// [A-Za-z0-9_], not starting with a digit, without "__" (reserved for engine names, so
// that engine names always translate back).
func ValidateName(kind, name string) error {
	if name == "" {
		return fmt.Errorf("%s name is empty", kind)
	}
	if len(name) > 64 {
		return fmt.Errorf("%s name %q is longer than 64 characters", kind, name)
	}
	for i, r := range name {
		ok := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return fmt.Errorf("%s name %q may contain only letters, digits and underscores, and may not start with a digit", kind, name)
		}
	}
	if strings.Contains(name, "__") {
		return fmt.Errorf("%s name %q may not contain a double underscore", kind, name)
	}
	return nil
}

// EngineDatabase is the engine database a logical database of an organization maps to.
func EngineDatabase(org uuid.UUID, name string) string {
	return "o_" + strings.ReplaceAll(org.String(), "-", "") + "__" + name
}

// LogicalDatabase maps an engine database name back to its organization and logical
// name; ok is false for names that are not tenant databases.
func LogicalDatabase(engine string) (org uuid.UUID, name string, ok bool) {
	rest, found := strings.CutPrefix(engine, "o_")
	if !found || len(rest) < 34 || rest[32:34] != "__" {
		return uuid.Nil, "", false
	}
	id, err := uuid.Parse(rest[:32])
	if err != nil {
		return uuid.Nil, "", false
	}
	return id, rest[34:], true
}

// GenerationTable is the engine table holding generation n of a table.
func GenerationTable(table string, n int) string { return fmt.Sprintf("%s__g%d", table, n) }

// GenerationUUID is the engine UUID of generation n of a table after it was re-sorted
// resorts times. Generations on S3 are created with it, so their data (kept with its
// metadata in the bucket, under a path made of the UUID) can be attached again from the
// catalog alone after the engine's local directory is lost.
func GenerationUUID(table uuid.UUID, n, resorts int) uuid.UUID {
	return uuid.NewSHA1(table, []byte(fmt.Sprintf("generation/%d/%d", n, resorts)))
}

// TokenPrefix starts every API key token, so keys are recognizable in logs and by
// secret scanners.
const TokenPrefix = "svck_"

// NewToken returns a fresh API key token: the prefix and 256 random bits.
func NewToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// HashToken is how tokens are stored and looked up. Tokens carry 256 random bits, so a
// fast hash is safe here (passwords, which do not, use argon2id).
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// TokenHint is the part of a token safe to show after creation.
func TokenHint(token string) string {
	if len(token) < len(TokenPrefix)+4 {
		return TokenPrefix + "…"
	}
	return token[:len(TokenPrefix)+4] + "…"
}
