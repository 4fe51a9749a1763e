package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// LoadOrCreateToken returns the API token kept in the file path (the
// --token-file flag). When the file exists and holds non-blank text, that
// text with surrounding white space trimmed is the token. Otherwise a fresh
// 256-bit random token (64 lowercase hex digits) is written there, followed
// by a newline, with mode 0600 (its directory is created with mode 0700),
// and returned. A file created concurrently by another process is read, not
// overwritten.
func LoadOrCreateToken(path string) (string, error) {
	for range 2 {
		tok, err := readToken(path)
		if err != nil || tok != "" {
			return tok, err
		}
		tok, err = writeToken(path)
		if !errors.Is(err, fs.ErrExist) {
			return tok, err
		}
	}
	return "", fmt.Errorf("token file %s: created concurrently and still empty", path)
}

// readToken returns the trimmed content of path, "" when it is missing or blank.
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// writeToken writes a fresh token to path: created exclusively when
// missing, or replacing a blank file.
func writeToken(path string) (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	tok := hex.EncodeToString(raw[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if _, err := os.Stat(path); err == nil {
		flag = os.O_WRONLY | os.O_TRUNC // exists but blank
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return "", fmt.Errorf("token file: %w", err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("token file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	return tok, nil
}

// DefaultTokenPath returns the default --token-file: "token" next to the
// default store, $XDG_STATE_HOME/acpmux/token (or
// ~/.local/state/acpmux/token).
func DefaultTokenPath() (string, error) {
	p, err := sqlite.DefaultPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(p), "token"), nil
}
