package main

import (
	"flag"
	"strconv"

	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// effectiveDefault returns, for a flag left at an empty default, the value
// the command uses in its place, quoted as TOML: the default of a command
// that changes it (demo's --state :memory:), the default state file or
// token file resolved; ok is false when there is none.
func effectiveDefault(f *flag.Flag) (string, bool) {
	if f.Value.String() != "" {
		return "", false
	}
	if f.DefValue != "" {
		return strconv.Quote(f.DefValue), true
	}
	var p string
	var err error
	switch f.Name {
	case "state":
		p, err = sqlite.DefaultPath()
	case "token-file", "upstream-token-file":
		p, err = httpapi.DefaultTokenPath()
	default:
		return "", false
	}
	if err != nil {
		return "", false
	}
	return strconv.Quote(p), true
}
