package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// The configuration file (docs/config.md) holds one TOML table per command,
// named as the command ([run], [demo]), whose keys are that command's flag
// names with values typed as the flag is: a string, integer or boolean, a
// duration as a string ("30s"), a repeatable flag as an array of strings.
// Precedence, lowest first: the flag's default, the file, the flag's
// environment variable (envFlags), the command line.

// envFlags names the environment variable that sets a flag's default, by
// flag name.
var envFlags = map[string]string{"log-level": "ACPMUX_LOG"}

// origin says where a flag got its value: "default", "flag", "env NAME" or
// "FILE:LINE".
type origin string

const (
	fromDefault origin = "default"
	fromFlag    origin = "flag"
)

// registerConfigFlag adds --config to fs, for a command that reads the
// configuration file.
func registerConfigFlag(fs *flag.FlagSet) {
	fs.String("config", "", "configuration file (TOML, a table per command, see docs/config.md) (default $XDG_CONFIG_HOME/acpmux/config.toml, read if it exists)")
}

// defaultConfigPath is $XDG_CONFIG_HOME/acpmux/config.toml, or
// ~/.config/acpmux/config.toml when XDG_CONFIG_HOME is unset or relative.
func defaultConfigPath() (string, error) {
	if d := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "acpmux", "config.toml"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the configuration file: %w (pass --config FILE)", err)
	}
	return filepath.Join(home, ".config", "acpmux", "config.toml"), nil
}

// configPath returns the file --config names in fs, or the default path.
// A default file that does not exist is no error: path is then "".
func configPath(fs *flag.FlagSet) (path string, err error) {
	if f := fs.Lookup("config"); f != nil && f.Value.String() != "" {
		return f.Value.String(), nil
	}
	p, err := defaultConfigPath()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	return p, nil
}

// applyConfig fills the flags of command in fs (already parsed from the
// command line) that the command line did not set: from their environment
// variable, else from the command's table of the configuration file. The
// whole file is checked: a table or key that names no configurable command
// or flag, or a value of the wrong type, is an error that names the key and
// its line. It returns where each flag's value came from, and the file read
// ("" when there was none).
func applyConfig(command string, fs *flag.FlagSet) (origins map[string]origin, path string, err error) {
	origins = map[string]origin{}
	fs.VisitAll(func(f *flag.Flag) { origins[f.Name] = fromDefault })
	fs.Visit(func(f *flag.Flag) { origins[f.Name] = fromFlag })
	for name, env := range envFlags {
		if o, ok := origins[name]; ok && o == fromDefault && os.Getenv(env) != "" {
			origins[name] = origin("env " + env)
		}
	}
	path, err = configPath(fs)
	if err != nil || path == "" {
		return origins, path, err
	}
	cf, err := readConfig(path)
	if err != nil {
		return origins, path, err
	}
	for _, v := range cf.values[command] {
		f := fs.Lookup(v.name)
		if f == nil || origins[v.name] != fromDefault {
			continue
		}
		for _, s := range v.set {
			if err := f.Value.Set(s); err != nil {
				return origins, path, fmt.Errorf("%s:%d: [%s] %s: invalid value %q", path, v.line, command, v.name, s)
			}
		}
		origins[v.name] = origin(fmt.Sprintf("%s:%d", path, v.line))
	}
	return origins, path, nil
}

// configFile is a checked configuration file.
type configFile struct {
	values map[string][]configValue // by command
}

// configValue is one key of a command's table: the flag it sets, the
// strings to pass to the flag's Set (one per element for a repeatable
// flag) and its line.
type configValue struct {
	name string
	set  []string
	line int
}

// readConfig reads and checks the configuration file at path against the
// flags of every configurable command (command.flags).
func readConfig(path string) (*configFile, error) {
	src, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no configuration file %s (docs/config.md says what goes in one)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("read configuration file: %w", err)
	}
	lines := keyLines(src)
	var top map[string]toml.Primitive
	md, err := toml.NewDecoder(bytes.NewReader(src)).Decode(&top)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cf := &configFile{values: map[string][]configValue{}}
	var errs []error
	for _, table := range sortedKeys(top) {
		c, ok := commands[table]
		if !ok || c.flags == nil || md.Type(table) != "Hash" {
			errs = append(errs, unknownTableError(path, lines, table))
			continue
		}
		var keys map[string]toml.Primitive
		if err := md.PrimitiveDecode(top[table], &keys); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: [%s]: %v", path, lines[table], table, err))
			continue
		}
		fs := c.flags()
		for _, k := range sortedKeys(keys) {
			line := lines[table+"."+k]
			f := fs.Lookup(k)
			if f == nil || k == "config" {
				errs = append(errs, fmt.Errorf("%s:%d: [%s]: unknown key %q (not a flag of acpmux %s)", path, line, table, k, table))
				continue
			}
			set, err := decodeFlagValue(&md, keys[k], f)
			for _, s := range set {
				if err == nil && f.Value.Set(s) != nil { // a fresh flag set: checks the value only
					err = fmt.Errorf("invalid value %q", s)
				}
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: [%s] %s: %v", path, line, table, k, err))
				continue
			}
			cf.values[table] = append(cf.values[table], configValue{name: k, set: set, line: line})
		}
	}
	return cf, errors.Join(errs...)
}

// unknownTableError names a top-level key that is not the table of a
// configurable command, and its line.
func unknownTableError(path string, lines map[string]int, k string) error {
	line := lines[k]
	if c, ok := commands[k]; ok && c.flags != nil {
		return fmt.Errorf("%s:%d: %q must be a table: [%s]", path, line, k, k)
	}
	if c, ok := commands[k]; ok && !c.hidden {
		return fmt.Errorf("%s:%d: [%s]: acpmux %s takes no settings from the configuration file", path, line, k, k)
	}
	return fmt.Errorf("%s:%d: unknown key %q: the file holds one table per command, such as [run]", path, line, k)
}

// decodeFlagValue decodes p as the type of flag f's value and returns the
// strings to pass to its Set.
func decodeFlagValue(md *toml.MetaData, p toml.Primitive, f *flag.Flag) ([]string, error) {
	g, _ := f.Value.(flag.Getter)
	var v any
	if g != nil {
		v = g.Get()
	}
	switch v.(type) {
	case bool:
		var b bool
		err := md.PrimitiveDecode(p, &b)
		return []string{strconv.FormatBool(b)}, wantType(err, "a boolean")
	case int, int64, uint, uint64:
		var n int64
		err := md.PrimitiveDecode(p, &n)
		return []string{strconv.FormatInt(n, 10)}, wantType(err, "an integer")
	case float64:
		var x float64
		err := md.PrimitiveDecode(p, &x)
		return []string{strconv.FormatFloat(x, 'g', -1, 64)}, wantType(err, "a number")
	case time.Duration:
		var s string
		err := md.PrimitiveDecode(p, &s)
		return []string{s}, wantType(err, `a duration string such as "30s"`)
	case []string:
		var ss []string
		err := md.PrimitiveDecode(p, &ss)
		return ss, wantType(err, "an array of strings")
	default:
		var s string
		err := md.PrimitiveDecode(p, &s)
		return []string{s}, wantType(err, "a string")
	}
}

func wantType(err error, want string) error {
	if err != nil {
		return fmt.Errorf("want %s", want)
	}
	return nil
}

// keyLines maps each table and key of a TOML file, dotted from the top
// ("run", "run.listen"), to the line where it first appears. It scans the
// text itself, as the TOML decoder reports no positions; lines inside
// multi-line strings are skipped.
func keyLines(src []byte) map[string]int {
	lines := map[string]int{}
	table := ""
	inMulti := ""
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, len(src)+1)
	for n := 1; sc.Scan(); n++ {
		t := strings.TrimSpace(sc.Text())
		if inMulti != "" {
			if strings.Count(t, inMulti)%2 == 1 {
				inMulti = ""
			}
			continue
		}
		switch {
		case t == "" || t[0] == '#':
			continue
		case t[0] == '[':
			end := strings.LastIndex(t, "]")
			if end < 0 {
				continue
			}
			table = joinKey(strings.Trim(t[:end], "[] \t"))
			record(lines, table, n)
		default:
			eq := strings.Index(t, "=")
			if eq < 0 {
				continue
			}
			k := joinKey(t[:eq])
			if table != "" {
				k = table + "." + k
			}
			record(lines, k, n)
			for _, q := range []string{`"""`, `'''`} {
				if strings.Count(t[eq:], q)%2 == 1 {
					inMulti = q
				}
			}
		}
	}
	return lines
}

// record notes line n for key k and for each of its dotted parents.
func record(lines map[string]int, k string, n int) {
	for {
		if _, ok := lines[k]; !ok {
			lines[k] = n
		}
		i := strings.LastIndex(k, ".")
		if i < 0 {
			return
		}
		k = k[:i]
	}
}

// joinKey turns a TOML key as written (a.b, "a".b, 'a') into its dotted
// form without quotes or spaces.
func joinKey(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if uq, err := strconv.Unquote(p); err == nil {
			p = uq
		}
		parts[i] = strings.Trim(p, "'")
	}
	return strings.Join(parts, ".")
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
