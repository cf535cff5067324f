package kafka

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Conn is how a client reaches the brokers: where, and the SASL credentials it presents.
// Every client of this package is made from one (Conn.Client), so a broker that asks for
// credentials gets them on every path.
type Conn struct {
	Seeds []string
	// SASL is empty for a broker without authentication (an operator's, on a trusted
	// network); the embedded broker always asks for it.
	SASL SASL
}

// SASL are credentials for a SASL_PLAINTEXT (or SASL_SSL) listener.
type SASL struct {
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
	Mechanism string `json:"mechanism"`
	User      string `json:"user"`
	Password  string `json:"password"`
}

// The SASL mechanisms a Conn speaks.
const (
	MechanismPlain       = "PLAIN"
	MechanismSCRAMSHA256 = "SCRAM-SHA-256"
	MechanismSCRAMSHA512 = "SCRAM-SHA-512"
)

// Validate checks that s is empty or complete.
func (s SASL) Validate() error {
	if s == (SASL{}) {
		return nil
	}
	if s.User == "" || s.Password == "" {
		return errors.New("kafka SASL: a user and a password are needed")
	}
	if _, err := s.mechanism(); err != nil {
		return err
	}
	return nil
}

func (s SASL) mechanism() (sasl.Mechanism, error) {
	switch s.Mechanism {
	case MechanismPlain, "":
		return plain.Auth{User: s.User, Pass: s.Password}.AsMechanism(), nil
	case MechanismSCRAMSHA256:
		return scram.Auth{User: s.User, Pass: s.Password}.AsSha256Mechanism(), nil
	case MechanismSCRAMSHA512:
		return scram.Auth{User: s.User, Pass: s.Password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("kafka SASL: unknown mechanism %q (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)", s.Mechanism)
}

// Opts are the client options that reach the brokers, before extra.
func (c Conn) Opts(extra ...kgo.Opt) ([]kgo.Opt, error) {
	if len(c.Seeds) == 0 {
		return nil, errors.New("kafka: no seed brokers")
	}
	opts := []kgo.Opt{kgo.SeedBrokers(c.Seeds...)}
	if c.SASL != (SASL{}) {
		if err := c.SASL.Validate(); err != nil {
			return nil, err
		}
		m, _ := c.SASL.mechanism()
		opts = append(opts, kgo.SASL(m))
	}
	return append(opts, extra...), nil
}

// Client returns a client of the brokers with extra options.
func (c Conn) Client(extra ...kgo.Opt) (*kgo.Client, error) {
	opts, err := c.Opts(extra...)
	if err != nil {
		return nil, err
	}
	return kgo.NewClient(opts...)
}

// CredentialsFile is where a broker in dir keeps the credentials svcd presents to it.
func CredentialsFile(dir string) string { return filepath.Join(dir, "sasl.json") }

// ReadCredentials reads SASL credentials from a JSON file written by the embedded broker
// (or an operator: {"mechanism":"SCRAM-SHA-512","user":"...","password":"..."}).
func ReadCredentials(file string) (SASL, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return SASL{}, fmt.Errorf("kafka credentials: %w", err)
	}
	var s SASL
	if err := json.Unmarshal(raw, &s); err != nil {
		return SASL{}, fmt.Errorf("kafka credentials %s: %w", file, err)
	}
	if s == (SASL{}) {
		return SASL{}, fmt.Errorf("kafka credentials %s: empty", file)
	}
	if err := s.Validate(); err != nil {
		return SASL{}, fmt.Errorf("kafka credentials %s: %w", file, err)
	}
	return s, nil
}

// brokerCredentials returns the credentials of the broker in dir, generated (mode 0600)
// on first use.
func brokerCredentials(dir string) (SASL, error) {
	file := CredentialsFile(dir)
	if s, err := ReadCredentials(file); err == nil {
		return s, os.Chmod(file, 0o600)
	} else if !errors.Is(err, os.ErrNotExist) {
		return SASL{}, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return SASL{}, err
	}
	s := SASL{Mechanism: MechanismPlain, User: "svc", Password: hex.EncodeToString(key)}
	raw, _ := json.Marshal(s)
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return SASL{}, fmt.Errorf("kafka broker: write credentials: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return SASL{}, fmt.Errorf("kafka broker: write credentials: %w", err)
	}
	return s, nil
}

// EnvConn is the broker of the test harness: KAFKA_SEEDS, and the credentials file named
// by KAFKA_SASL_FILE when set (`svcstack kafka start` writes both). ok is false without
// KAFKA_SEEDS. Every test that talks to the harness's broker directly starts here.
func EnvConn() (c Conn, ok bool, err error) {
	c.Seeds = ParseSeeds(os.Getenv("KAFKA_SEEDS"))
	if len(c.Seeds) == 0 {
		return Conn{}, false, nil
	}
	if f := os.Getenv("KAFKA_SASL_FILE"); f != "" {
		if c.SASL, err = ReadCredentials(f); err != nil {
			return Conn{}, false, err
		}
	}
	return c, true, nil
}
