// Package s3store is the service's access to customer-owned S3-compatible object storage:
// the configuration of its own credentials (environment or file, never a request), the
// verification of a customer's bucket and role (Verify), and what the engine needs to keep
// table data there (EngineCredentials, DiskSetting).
//
// Secrets never enter SQL text or the engine's environment: the engine fetches temporary
// credentials (the assumed role's) from EngineCredentials, a loopback endpoint of its own
// node, and table disks say `use_environment_credentials = 1`.
package s3store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Config is the service's own access to object storage.
type Config struct {
	// Endpoint is an S3-compatible endpoint (path-style addressing), e.g.
	// http://127.0.0.1:9000; empty means AWS (virtual-hosted addressing in Region).
	Endpoint string
	// Region of the buckets and of STS. Default us-east-1.
	Region string
	// AccessKeyID and SecretAccessKey are the service's credentials; it assumes customer
	// roles with them.
	AccessKeyID, SecretAccessKey string
	// TagDomain is the domain of the tag key `<domain>/cluster` that buckets and roles
	// must carry. Default svc-data.dev.
	TagDomain string
	// AllowServiceCredentials is the operator's opt-in to customer storage that names no
	// role: the engine then writes with federated session credentials of the service's own
	// identity, scoped to that storage's buckets and paths (EngineCredentials), and the
	// ownership tag is all that says the bucket is the organization's. Default off: every
	// cluster and database storage names a role of the customer's, with an external id.
	AllowServiceCredentials bool
}

// ServiceCredentialsAllowed reports AllowServiceCredentials.
func (c Config) ServiceCredentialsAllowed() bool { return c.AllowServiceCredentials }

// Configured reports whether the service has storage credentials.
func (c Config) Configured() bool { return c.AccessKeyID != "" && c.SecretAccessKey != "" }

// TagKey is the tag key buckets and roles must carry.
func (c Config) TagKey() string { return c.TagDomain + "/cluster" }

// FromEnv reads the configuration: SVC_S3_ENDPOINT, SVC_S3_REGION, SVC_S3_TAG_DOMAIN,
// SVC_S3_ALLOW_SERVICE_CREDENTIALS (true or 1 opts in), and
// the credentials from SVC_S3_ACCESS_KEY_ID and SVC_S3_SECRET_ACCESS_KEY or from the file
// SVC_S3_CREDENTIALS_FILE (lines `access_key_id = ...` and `secret_access_key = ...`).
func FromEnv() (Config, error) {
	c := Config{
		Endpoint:        strings.TrimRight(os.Getenv("SVC_S3_ENDPOINT"), "/"),
		Region:          os.Getenv("SVC_S3_REGION"),
		TagDomain:       os.Getenv("SVC_S3_TAG_DOMAIN"),
		AccessKeyID:     os.Getenv("SVC_S3_ACCESS_KEY_ID"),
		SecretAccessKey: os.Getenv("SVC_S3_SECRET_ACCESS_KEY"),
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	if v := os.Getenv("SVC_S3_ALLOW_SERVICE_CREDENTIALS"); v != "" {
		allow, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("SVC_S3_ALLOW_SERVICE_CREDENTIALS: want true or false, not %q", v)
		}
		c.AllowServiceCredentials = allow
	}
	if c.TagDomain == "" {
		c.TagDomain = "svc-data.dev"
	}
	if p := os.Getenv("SVC_S3_CREDENTIALS_FILE"); p != "" {
		f, err := os.Open(p)
		if err != nil {
			return c, fmt.Errorf("SVC_S3_CREDENTIALS_FILE: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), "=")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "access_key_id":
				c.AccessKeyID = strings.TrimSpace(v)
			case "secret_access_key":
				c.SecretAccessKey = strings.TrimSpace(v)
			}
		}
		if err := sc.Err(); err != nil {
			return c, fmt.Errorf("SVC_S3_CREDENTIALS_FILE: %w", err)
		}
		if !c.Configured() {
			return c, errors.New("SVC_S3_CREDENTIALS_FILE: want lines access_key_id = ... and secret_access_key = ...")
		}
	}
	return c, nil
}

// URL is the HTTP address of a bucket's path, ending in a slash: the operator's endpoint
// (or AWS's regional endpoint) with the bucket and the path as its path (path-style), so
// that the host is always the operator's. The bucket and path are tenant text, validated
// when the storage was accepted (catalog.S3Storage.Validate); here they are only ever
// path segments, escaped by net/url, never part of the host.
func (c Config) URL(bucket, path string) (string, error) {
	base := &url.URL{Scheme: "https", Host: "s3." + c.Region + ".amazonaws.com"}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return "", fmt.Errorf("SVC_S3_ENDPOINT %q is not an http(s) URL", c.Endpoint)
		}
		base = u
	}
	segs := []string{bucket}
	for s := range strings.SplitSeq(path, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	return base.JoinPath(segs...).String() + "/", nil
}

// DiskSetting is the MergeTree setting that keeps a table's data under bucket/path: an
// object-storage disk with plain_rewritable metadata, so each part's metadata is kept in
// the bucket too and a table can be attached again from the bucket alone (after the local
// data directory is lost). Its credentials come from the engine's environment
// (EngineCredentials), so no secret is in the statement, the table's metadata or an error.
func (c Config) DiskSetting(bucket, path string) (string, error) {
	u, err := c.URL(bucket, path)
	if err != nil {
		return "", err
	}
	return "disk = disk(type = object_storage, object_storage_type = s3, metadata_type = plain_rewritable, endpoint = " +
		quote(u) + ", use_environment_credentials = 1)", nil
}

func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// awsConfig is an SDK configuration with the given credentials.
func (c Config) awsConfig(creds aws.CredentialsProvider) aws.Config {
	cfg := aws.Config{Region: c.Region, Credentials: creds,
		HTTPClient: &http.Client{Timeout: 20 * time.Second}, RetryMaxAttempts: 2}
	if c.Endpoint != "" {
		cfg.BaseEndpoint = aws.String(c.Endpoint)
	}
	return cfg
}

func (c Config) static() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, "")
}

// S3Client is an S3 client with the service's credentials (path-style when Endpoint is set).
func (c Config) S3Client() *s3.Client { return c.s3Client(c.static()) }

func (c Config) s3Client(creds aws.CredentialsProvider) *s3.Client {
	return s3.NewFromConfig(c.awsConfig(creds), func(o *s3.Options) { o.UsePathStyle = c.Endpoint != "" })
}

// ListObjects returns the keys under bucket/prefix.
func (c Config) ListObjects(ctx context.Context, bucket, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(c.S3Client(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys, nil
}
