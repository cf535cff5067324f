package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svc-data/svc/edge/client"
)

func init() { register(storageCommand) }

// storageCommand checks customer S3 storage before a cluster or database uses it
// (POST /v1/clusters/verify-s3-access).
func storageCommand(a *app) *cobra.Command {
	var data, backups, roleARN, externalID, bucketTag string
	verify := &cobra.Command{Use: "verify", Short: "Verify the service can use an S3 bucket: role, tags, and a probe object written, read and deleted", Args: args(0, 0),
		RunE: runE(func(ctx context.Context, _ []string) error {
			body := client.VerifyS3AccessJSONRequestBody{}
			for _, l := range []struct {
				flag, v string
				bucket  *string
				path    **string
			}{{"--data", data, &body.S3Storage.Data.Bucket, &body.S3Storage.Data.Path},
				{"--backups", backups, &body.S3Storage.Backups.Bucket, &body.S3Storage.Backups.Path}} {
				bucket, path, _ := strings.Cut(strings.TrimPrefix(l.v, "s3://"), "/")
				if bucket == "" {
					return fmt.Errorf("%s BUCKET[/PATH] is required", l.flag)
				}
				*l.bucket, *l.path = bucket, ptr(path)
			}
			if roleARN != "" {
				body.S3Storage.RoleArn = ptr(roleARN)
			}
			if externalID != "" {
				body.S3Storage.ExternalId = ptr(externalID)
			}
			if bucketTag != "" {
				body.DatabaseS3Access = &client.DatabaseS3Access{ExternalId: externalID, DatabaseBucketTag: bucketTag}
			}
			return a.emit(a.call(ctx, scopeOrg, func(ctx context.Context, c *client.Client) (*http.Response, error) {
				return c.VerifyS3Access(ctx, &client.VerifyS3AccessParams{}, body)
			}))
		})}
	verify.Flags().StringVar(&data, "data", "", "data location: BUCKET[/PATH] (s3:// optional)")
	verify.Flags().StringVar(&backups, "backups", "", "backups location: BUCKET[/PATH] (default: the data location)")
	verify.Flags().StringVar(&roleARN, "role-arn", "", "the role the service assumes")
	verify.Flags().StringVar(&externalID, "external-id", "", "the external id of the role's trust policy")
	verify.Flags().StringVar(&bucketTag, "bucket-tag", "", "the value the <tag_domain>/cluster tag must have (database_bucket_tag)")
	verify.PreRun = func(*cobra.Command, []string) {
		if backups == "" {
			backups = data
		}
	}
	return group("storage", "Customer S3 storage: verify", verify)
}
