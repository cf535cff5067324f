package statement

import (
	"strings"

	"github.com/svc-data/svc/query/sortkey"
)

// SortingKey is the one validator of a table's logical sorting key, for the REST API
// (POST /v1/tables, PATCH /v1/tables/{table}) as for SQL DDL (ORDER BY of CREATE TABLE,
// ALTER TABLE ... MODIFY ORDER BY): expressions separated by commas, row-wise (no
// subqueries, aggregates, window functions, arrayJoin, lambdas' escapes), no aliases,
// functions through the same deny-list as queries. It returns the canonical key text
// rendered from the syntax tree, so user text never reaches engine DDL; "" stays ""
// (an automatic key).
func SortingKey(key string) (string, error) {
	if strings.TrimSpace(key) == "" {
		return "", nil
	}
	a := newAnalyzer(key, &Env{Principal: KeyWithPermission(PermAdmin), Catalog: &StaticCatalog{}})
	canonical, err := func() (s string, e *Error) {
		defer func() {
			if r := recover(); r != nil {
				s, e = "", badRequest(CodeSortingKey, -1, "", "the sorting key could not be analyzed: %v", r)
			}
		}()
		exprs, err := parseExprList(key, 0, len(key))
		if err != nil {
			err.Code = CodeSortingKey
			return "", err
		}
		if strings.HasSuffix(strings.TrimSpace(key), ",") {
			return "", badRequest(CodeSortingKey, len(key)-1, "", "trailing comma in the sorting key")
		}
		return a.sortingKey(exprs, 0, false)
	}()
	if err != nil {
		return "", err
	}
	if canonical == "" {
		return "", badRequest(CodeSortingKey, 0, "", "the sorting key has no expression")
	}
	// The compiler must read the canonical text (it refuses lambdas and * too).
	if _, err := sortkey.Parse(canonical); err != nil {
		return "", badRequest(CodeSortingKey, 0, "", "%v", err)
	}
	return canonical, nil
}
