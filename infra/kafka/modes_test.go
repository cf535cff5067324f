package kafka

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/svc-data/svc/infra/testenv"
)

// TestBrokerFilesArePrivate starts a broker from a process whose umask lets everyone
// read new files, in a directory everyone can read, writes records and a group commit,
// and checks that nothing in the broker's directory (segments, indexes, metadata, the
// offsets topic, its logs and config) can be read or entered by another user.
func TestBrokerFilesArePrivate(t *testing.T) {
	libs := testenv.KafkaLibs(t)
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "kafka")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := startBroker(ctx, t, libs, dir)
	cl, err := b.Conn().Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "private"); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "private", Value: []byte("a tenant's row")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	offs := kadm.Offsets{}
	offs.AddOffset("private", 0, 1, -1)
	if _, err := adm.CommitOffsets(ctx, "private-group", offs); err != nil {
		t.Fatal(err)
	}
	var segments int
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if filepath.Ext(path) == ".log" {
			segments++
		}
		if info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v: others can read it", path, info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if segments < 3 { // two partitions of the topic and the offsets topic at least
		t.Fatalf("only %d segment files under %s: the check saw too little", segments, dir)
	}
}
