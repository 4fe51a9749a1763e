package streamjson

import (
	"encoding/json"
	"math/big"
	"reflect"
	"strings"

	"github.com/acpmux/acpmux/acp"
)

// caseVariant returns a member name of the object obj that matches one of
// names only when compared case-insensitively (encoding/json would read
// it as that member, a JavaScript SDK would not), or "".
func caseVariant(obj []byte, names ...string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return ""
	}
	for k := range m {
		for _, n := range names {
			if k != n && strings.EqualFold(k, n) {
				return k
			}
		}
	}
	return ""
}

// JSONEqual reports whether x and y are the same JSON value: objects with
// the same members (in any order), arrays with equal elements in order,
// equal strings, numbers of equal value (1 and 1.0 are equal), booleans and
// null. Invalid JSON, or a duplicate member in either, is never equal.
func JSONEqual(x, y []byte) bool {
	if acp.DuplicateKey(x) != "" || acp.DuplicateKey(y) != "" {
		return false
	}
	vx, okx := decodeNumbers(x)
	vy, oky := decodeNumbers(y)
	return okx && oky && valueEqual(vx, vy)
}

func decodeNumbers(b []byte) (any, bool) {
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return nil, false
	}
	return v, true
}

func valueEqual(x, y any) bool {
	switch x := x.(type) {
	case json.Number:
		y, ok := y.(json.Number)
		if !ok {
			return false
		}
		rx, okx := new(big.Rat).SetString(string(x))
		ry, oky := new(big.Rat).SetString(string(y))
		return okx && oky && rx.Cmp(ry) == 0
	case map[string]any:
		y, ok := y.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !valueEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := y.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valueEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(x, y)
}
