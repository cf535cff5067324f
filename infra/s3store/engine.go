package s3store

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"
	"github.com/google/uuid"
)

// Role is what an engine writes to S3 as: a customer role the service assumes (its ARN
// and external id), or, when ARN is empty, the service's own identity narrowed to
// Locations (storage an operator opted into, SVC_S3_ALLOW_SERVICE_CREDENTIALS).
type Role struct {
	ARN, ExternalID string
	// Locations are the buckets and paths the engine may use without a role.
	Locations []Location
}

// key identifies the credentials of r in the cache.
func (r Role) key() string {
	k := r.ARN + "\x00" + r.ExternalID
	for _, l := range r.Locations {
		k += "\x00" + l.Bucket + "/" + strings.Trim(l.Path, "/")
	}
	return k
}

// Session credentials are assumed for RoleSession and served from a cache until
// RefreshBefore their expiry, when the role is assumed again; the engine's SDK fetches
// again when its copy nears expiry (and at least every few minutes), so it always holds
// credentials with more than RefreshBefore-of-margin left when it asked.
const (
	RoleSession   = time.Hour
	RefreshBefore = 15 * time.Minute
)

// EngineCredentials serves each local engine the credentials its S3 disks sign with, over
// loopback HTTP in the AWS container-credentials form the engine's SDK reads
// (AWS_CONTAINER_CREDENTIALS_FULL_URI and AWS_CONTAINER_AUTHORIZATION_TOKEN, in the
// engine's environment; EngineEnv). A cluster's engine gets the temporary session
// credentials (access key, secret, session token) of the role its storage names, assumed
// with the external id by the service's own credentials; when the storage names no role,
// federated session credentials (STS GetFederationToken) whose session policy allows
// only the cluster's buckets and paths. The service's long-lived secret is never served.
// The secrets are in no environment, file,
// statement, log or API answer: only this endpoint's body, which asks for a per-cluster
// token derived from a random key of this process.
type EngineCredentials struct {
	cfg  Config
	role func(cluster uuid.UUID) Role
	log  *slog.Logger
	key  []byte
	ln   net.Listener
	srv  *http.Server
	now  func() time.Time

	mu    sync.Mutex
	cache map[string]aws.Credentials
}

// NewEngineCredentials listens on a loopback port and serves engines the credentials of
// role(cluster). Close stops it.
func NewEngineCredentials(cfg Config, role func(cluster uuid.UUID) Role, log *slog.Logger) (*EngineCredentials, error) {
	if !cfg.Configured() {
		return nil, errors.New("engine credentials need the service's storage credentials")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	e := &EngineCredentials{cfg: cfg, role: role, log: log, key: make([]byte, 32), ln: ln,
		now: time.Now, cache: map[string]aws.Credentials{}}
	if _, err := rand.Read(e.key); err != nil {
		ln.Close()
		return nil, err
	}
	e.srv = &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = e.srv.Serve(ln) }()
	return e, nil
}

// Close stops serving.
func (e *EngineCredentials) Close() error { return e.srv.Close() }

// URL is where cluster's engine fetches its credentials.
func (e *EngineCredentials) URL(cluster uuid.UUID) string {
	return "http://" + e.ln.Addr().String() + "/engine-credentials/" + cluster.String()
}

func (e *EngineCredentials) token(cluster uuid.UUID) string {
	m := hmac.New(sha256.New, e.key)
	m.Write(cluster[:])
	return hex.EncodeToString(m.Sum(nil))
}

// EngineEnv is the environment of cluster's engine: where to fetch credentials and the
// token to show, the region, and no other credential source (no shared files, no
// instance metadata).
func (e *EngineCredentials) EngineEnv(cluster uuid.UUID) []string {
	return []string{
		"AWS_CONTAINER_CREDENTIALS_FULL_URI=" + e.URL(cluster),
		"AWS_CONTAINER_AUTHORIZATION_TOKEN=" + e.token(cluster),
		"AWS_REGION=" + e.cfg.Region,
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_SHARED_CREDENTIALS_FILE=/nonexistent",
		"AWS_CONFIG_FILE=/nonexistent",
	}
}

// containerCredentials is the body the AWS SDKs' container credentials provider reads.
type containerCredentials struct {
	AccessKeyID     string `json:"AccessKeyId"`
	SecretAccessKey string `json:"SecretAccessKey"`
	Token           string `json:"Token,omitempty"`
	Expiration      string `json:"Expiration,omitempty"`
}

func (e *EngineCredentials) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(strings.TrimPrefix(r.URL.Path, "/engine-credentials/"))
	if err != nil || r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/engine-credentials/") {
		http.NotFound(w, r)
		return
	}
	if !hmac.Equal([]byte(r.Header.Get("Authorization")), []byte(e.token(id))) {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	c, err := e.Credentials(r.Context(), e.role(id))
	if err != nil {
		// The error names the STS code only: never a credential, the role or the id.
		e.log.Warn("engine storage credentials unavailable", slog.String("cluster", id.String()), slog.String("error", codeOnly(err)))
		http.Error(w, "credentials unavailable", http.StatusBadGateway)
		return
	}
	body := containerCredentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, Token: c.SessionToken}
	if c.CanExpire {
		body.Expiration = c.Expires.UTC().Format(time.RFC3339)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(body)
}

// Credentials returns the session credentials for role: the role's, assumed with its
// external id, or without a role federated credentials of the service scoped to
// role.Locations; assumed again once less than RefreshBefore of them is left.
func (e *EngineCredentials) Credentials(ctx context.Context, role Role) (aws.Credentials, error) {
	k := role.key()
	e.mu.Lock()
	c, ok := e.cache[k]
	e.mu.Unlock()
	if ok && e.now().Add(RefreshBefore).Before(c.Expires) {
		return c, nil
	}
	stsc := sts.NewFromConfig(e.cfg.awsConfig(e.cfg.static()))
	var cr *ststypes.Credentials
	if role.ARN != "" {
		out, err := stsc.AssumeRole(ctx, &sts.AssumeRoleInput{
			RoleArn: aws.String(role.ARN), RoleSessionName: aws.String("svc-engine"),
			ExternalId: nonEmpty(role.ExternalID), DurationSeconds: aws.Int32(int32(RoleSession / time.Second))})
		if err != nil {
			return aws.Credentials{}, err
		}
		cr = out.Credentials
	} else {
		if len(role.Locations) == 0 {
			return aws.Credentials{}, errors.New("no storage to serve credentials for")
		}
		out, err := stsc.GetFederationToken(ctx, &sts.GetFederationTokenInput{Name: aws.String("svc-engine"),
			Policy: aws.String(SessionPolicy(role.Locations)), DurationSeconds: aws.Int32(int32(RoleSession / time.Second))})
		if err != nil {
			return aws.Credentials{}, err
		}
		cr = out.Credentials
	}
	c = aws.Credentials{AccessKeyID: aws.ToString(cr.AccessKeyId), SecretAccessKey: aws.ToString(cr.SecretAccessKey),
		SessionToken: aws.ToString(cr.SessionToken), CanExpire: true, Expires: aws.ToTime(cr.Expiration)}
	if c.SessionToken == "" || c.AccessKeyID == e.cfg.AccessKeyID {
		// Whatever STS answered, the engine is never handed the long-lived key.
		return aws.Credentials{}, errors.New("STS answered no session credentials")
	}
	e.mu.Lock()
	e.cache[k] = c
	e.mu.Unlock()
	return c, nil
}

// SessionPolicy is the IAM policy that narrows the service's federated credentials to
// locs: objects under each path, and listing the bucket under it.
func SessionPolicy(locs []Location) string {
	type statement struct {
		Effect    string         `json:"Effect"`
		Action    []string       `json:"Action"`
		Resource  []string       `json:"Resource"`
		Condition map[string]any `json:"Condition,omitempty"`
	}
	var st []statement
	for _, l := range locs {
		p := strings.Trim(l.Path, "/")
		objects, prefixes := "arn:aws:s3:::"+l.Bucket+"/*", []string{"*"}
		if p != "" {
			objects, prefixes = "arn:aws:s3:::"+l.Bucket+"/"+p+"/*", []string{p + "/*", p}
		}
		st = append(st,
			statement{Effect: "Allow", Action: []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"}, Resource: []string{objects}},
			statement{Effect: "Allow", Action: []string{"s3:ListBucket"}, Resource: []string{"arn:aws:s3:::" + l.Bucket},
				Condition: map[string]any{"StringLike": map[string]any{"s3:prefix": prefixes}}})
	}
	b, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": st})
	return string(b)
}
