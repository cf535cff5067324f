package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
)

// ErrBadCursor means a page cursor was not one the service returned.
var ErrBadCursor = errors.New("invalid cursor")

// PartitionLag is how far a cluster's consumers are behind on one partition.
type PartitionLag struct {
	Partition int32 `json:"partition"`
	Committed int64 `json:"committed"`
	End       int64 `json:"end"`
	Lag       int64 `json:"lag"`
}

// LagReader reads consumer lag from the log.
type LagReader interface {
	Lag(ctx context.Context, cluster uuid.UUID) ([]PartitionLag, error)
}

// DeadLetter is a row the engine rejected, kept with the reason.
type DeadLetter struct {
	ID       string    `json:"id"` // partition/offset in the dead-letter topic
	TableID  string    `json:"table_id"`
	Table    string    `json:"table"`
	Reason   string    `json:"reason"`
	Row      string    `json:"row"`
	Source   string    `json:"source"` // topic/partition/offset of the original record
	Received time.Time `json:"dead_lettered_at"`
}

// DeadLetterQuery selects dead letters of one table, oldest first.
type DeadLetterQuery struct {
	TableID uuid.UUID
	// Cursor continues a previous page; empty starts at the oldest retained.
	Cursor string
	Limit  int
}

// DeadLetterPage is one page of dead letters.
type DeadLetterPage struct {
	DeadLetters []DeadLetter `json:"dead_letters"`
	// NextCursor continues after this page; null when the topic's end was reached.
	NextCursor *string `json:"next_cursor"`
}

// DeadLetterReader reads a cluster's dead-letter topic.
type DeadLetterReader interface {
	DeadLetters(ctx context.Context, cluster uuid.UUID, q DeadLetterQuery) (DeadLetterPage, error)
}
