package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// centralURL is Maven Central, which also publishes Maven's own distribution.
const centralURL = "https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven"

// fetchMaven makes sure the pinned Maven distribution is unpacked in dir/<version>, so
// that a machine with only Go, Java and npm can fetch Kafka's jars. The archive is
// verified against the SHA-512 digest Maven Central publishes beside it.
func fetchMaven(args []string) error {
	fs := flag.NewFlagSet("svcstack maven", flag.ContinueOnError)
	version := fs.String("version", "3.9.9", "Maven version")
	dir := fs.String("dir", "", "cache directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("maven: -dir is required")
	}
	dest := filepath.Join(*dir, *version)
	if _, err := os.Stat(filepath.Join(dest, "bin", "mvn")); err == nil {
		return nil
	}
	base := fmt.Sprintf("%s/%s/apache-maven-%s-bin.tar.gz", centralURL, *version, *version)
	client := &http.Client{Timeout: 5 * time.Minute}
	want, err := get(client, base+".sha512")
	if err != nil {
		return err
	}
	archive, err := get(client, base)
	if err != nil {
		return err
	}
	sum := sha512.Sum512(archive)
	if got := hex.EncodeToString(sum[:]); got != strings.Fields(string(want))[0] {
		return fmt.Errorf("maven archive digest %s does not match the published %s", got, strings.TrimSpace(string(want)))
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(*dir, ".maven-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := untar(archive, tmp); err != nil {
		return fmt.Errorf("unpack maven: %w", err)
	}
	_ = os.RemoveAll(dest)
	return os.Rename(filepath.Join(tmp, "apache-maven-"+*version), dest)
}

func get(c *http.Client, url string) ([]byte, error) {
	resp, err := c.Get(url)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

func untar(archive []byte, dir string) error {
	zr, err := gzip.NewReader(strings.NewReader(string(archive)))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(h.Name)
		if strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			return fmt.Errorf("archive entry %q escapes the directory", h.Name)
		}
		path := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		}
	}
}
