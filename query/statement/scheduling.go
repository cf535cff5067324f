package statement

import (
	"strings"

	"github.com/svc-data/svc/query/sqlquote"
)

// CREATE/DROP WORKLOAD and RESOURCE (POST /v1/query), which the
// parser library does not know. They are read here on tokens and passed to
// the engine as SQL this package writes from what it read, so no text of the
// statement reaches the engine unchecked.

const (
	workloadHint = "CREATE WORKLOAD [IF NOT EXISTS] analytics [ON CLUSTER 'default'] IN all SETTINGS max_concurrent_threads = 4 FOR cpu"
	resourceHint = "CREATE RESOURCE [IF NOT EXISTS] cpu [ON CLUSTER 'default'] (MASTER THREAD, WORKER THREAD)"
)

func (a *analyzer) createScheduling(t *tokens) (*Statement, *Error) {
	orReplace := t.accept("OR", "REPLACE")
	isWorkload := t.peek().is("WORKLOAD")
	hint, what := resourceHint, "RESOURCE"
	if isWorkload {
		hint, what = workloadHint, "WORKLOAD"
	}
	t.next()
	ifNot := t.accept("IF", "NOT", "EXISTS")
	if !orReplace && t.accept("OR", "REPLACE") {
		orReplace = true
	}
	if orReplace && ifNot {
		return nil, badRequest(CodeSyntax, t.peek().pos, hint, "IF NOT EXISTS and OR REPLACE cannot be combined")
	}
	if err := a.requireScheduling("managing workloads and resources"); err != nil {
		return nil, err
	}
	name, pos, err := plainName(t, "a "+strings.ToLower(what)+" name", hint)
	if err != nil {
		return nil, err
	}
	cluster, err := a.schedulingCluster(t, hint)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("CREATE ")
	if orReplace {
		b.WriteString("OR REPLACE ")
	}
	b.WriteString(what + " ")
	if ifNot {
		b.WriteString("IF NOT EXISTS ")
	}
	b.WriteString(quoteName(name, isKeyword(name)))
	if cluster {
		b.WriteString(" ON CLUSTER 'default'")
	}
	kind := KindCreateResource
	if isWorkload {
		kind = KindCreateWorkload
		if err := workloadBody(t, &b); err != nil {
			return nil, err
		}
	} else if err := resourceBody(t, &b, pos); err != nil {
		return nil, err
	}
	if err := t.expectEnd(hint); err != nil {
		return nil, err
	}
	return &Statement{Kind: kind, SQL: b.String(), EmptyResult: true}, nil
}

// schedulingCluster reads ON CLUSTER 'default' after the object name:
// accepted with local workload storage, rejected with Keeper storage.
func (a *analyzer) schedulingCluster(t *tokens, hint string) (bool, *Error) {
	pos := t.peek().pos
	cluster, err := onCluster(t, hint)
	if err != nil {
		return false, err
	}
	if cluster && a.env.Cluster.KeeperWorkloadStorage {
		return false, badRequest(CodeCluster, pos, "omit ON CLUSTER: workloads are stored in Keeper and apply to every replica",
			"ON CLUSTER is rejected with Keeper-backed workload storage")
	}
	return cluster, nil
}

// workloadBody reads [IN parent] [SETTINGS name = value [FOR resource], ...].
func workloadBody(t *tokens, b *strings.Builder) *Error {
	if t.accept("IN") {
		parent, _, err := plainName(t, "a parent workload name", workloadHint)
		if err != nil {
			return err
		}
		b.WriteString(" IN " + quoteName(parent, isKeyword(parent)))
	}
	if !t.accept("SETTINGS") {
		return nil
	}
	b.WriteString(" SETTINGS ")
	for i := 0; ; i++ {
		name, _, err := plainName(t, "a setting name", workloadHint)
		if err != nil {
			return err
		}
		if err := t.expectOp(workloadHint, "="); err != nil {
			return err
		}
		value, err := literal(t, workloadHint)
		if err != nil {
			return err
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name + " = " + value)
		if t.accept("FOR") {
			res, _, err := plainName(t, "a resource name", workloadHint)
			if err != nil {
				return err
			}
			b.WriteString(" FOR " + quoteName(res, isKeyword(res)))
		}
		if !t.acceptOp(",") {
			return nil
		}
	}
}

// literal reads a numeric (optionally signed) or string literal without
// escapes and returns its SQL text.
func literal(t *tokens, hint string) (string, *Error) {
	sign := ""
	if t.peek().isOp("-") || t.peek().isOp("+") {
		sign = t.next().text
	}
	tok := t.next()
	switch tok.kind {
	case tokNumber:
		return sign + tok.text, nil
	case tokString:
		if s, ok := plainString(tok.text); ok && sign == "" {
			return sqlquote.String(s), nil
		}
	}
	return "", badRequest(CodeWorkload, tok.pos, hint, "expected a number or a string literal without escapes, got %s", tok.describe())
}

// resourceBody reads (operation, ...) with the operations resourceHint names.
func resourceBody(t *tokens, b *strings.Builder, pos int) *Error {
	if err := t.expectOp(resourceHint, "("); err != nil {
		return err
	}
	b.WriteString(" (")
	for i := 0; ; i++ {
		var op string
		switch {
		case t.accept("MASTER", "THREAD"):
			op = "MASTER THREAD"
		case t.accept("WORKER", "THREAD"):
			op = "WORKER THREAD"
		case t.accept("READ", "ANY", "DISK"):
			op = "READ ANY DISK"
		case t.accept("WRITE", "ANY", "DISK"):
			op = "WRITE ANY DISK"
		case t.accept("READ", "DISK"), t.accept("WRITE", "DISK"):
			dir := strings.ToUpper(t.toks[t.i-2].text)
			disk, _, err := plainName(t, "a disk name", resourceHint)
			if err != nil {
				return err
			}
			op = dir + " DISK " + quoteName(disk, isKeyword(disk))
		default:
			tok := t.peek()
			return badRequest(CodeWorkload, tok.pos, resourceHint,
				"unsupported resource operation %s; use MASTER THREAD, WORKER THREAD, READ DISK d, WRITE DISK d, READ ANY DISK or WRITE ANY DISK (memory reservation and query slots are not supported)",
				tok.describe())
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(op)
		if t.acceptOp(")") {
			b.WriteString(")")
			return nil
		}
		if err := t.expectOp(resourceHint, ","); err != nil {
			return err
		}
	}
}

func (a *analyzer) dropScheduling(t *tokens) (*Statement, *Error) {
	isWorkload := t.peek().is("WORKLOAD")
	hint, what, kind := "DROP RESOURCE [IF EXISTS] cpu", "RESOURCE", KindDropResource
	if isWorkload {
		hint, what, kind = "DROP WORKLOAD [IF EXISTS] analytics", "WORKLOAD", KindDropWorkload
	}
	t.next()
	ifExists := t.accept("IF", "EXISTS")
	if err := a.requireScheduling("managing workloads and resources"); err != nil {
		return nil, err
	}
	name, _, err := plainName(t, "a "+strings.ToLower(what)+" name", hint)
	if err != nil {
		return nil, err
	}
	if t.peek().isOp(",") {
		return nil, badRequest(CodeWorkload, t.peek().pos, hint, "drop one %s per statement", strings.ToLower(what))
	}
	cluster, err := a.schedulingCluster(t, hint)
	if err != nil {
		return nil, err
	}
	if err := t.expectEnd(hint); err != nil {
		return nil, err
	}
	sql := "DROP " + what + " "
	if ifExists {
		sql += "IF EXISTS "
	}
	sql += quoteName(name, isKeyword(name))
	if cluster {
		sql += " ON CLUSTER 'default'"
	}
	return &Statement{Kind: kind, SQL: sql, EmptyResult: true}, nil
}
