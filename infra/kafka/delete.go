package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// DeleteTopicsAndGroup deletes topics and a consumer group; ones already gone are fine.
func DeleteTopicsAndGroup(ctx context.Context, conn Conn, group string, topics ...string) error {
	cl, err := conn.Client()
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if group != "" {
		res, err := adm.DeleteGroups(ctx, group)
		if err != nil {
			return fmt.Errorf("delete group %s: %w", group, err)
		}
		for _, r := range res {
			if r.Err != nil && !errors.Is(r.Err, kerr.GroupIDNotFound) {
				return fmt.Errorf("delete group %s: %w", group, r.Err)
			}
		}
	}
	res, err := adm.DeleteTopics(ctx, topics...)
	if err != nil {
		return fmt.Errorf("delete topics: %w", err)
	}
	for _, r := range res.Sorted() {
		if r.Err != nil && !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("delete topic %s: %w", r.Topic, r.Err)
		}
	}
	return nil
}

// TopicExists reports whether the broker knows topic.
func TopicExists(ctx context.Context, conn Conn, topic string) (bool, error) {
	cl, err := conn.Client()
	if err != nil {
		return false, err
	}
	defer cl.Close()
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		return false, err
	}
	return td.Has(topic), nil
}
