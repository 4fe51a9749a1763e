package streamjson_test

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/acpmux/acpmux/streamjson"
)

// BenchmarkChunk maps one agent_message_chunk and encodes what it yields,
// with and without partial messages (the per-chunk cost of a long turn).
func BenchmarkChunk(b *testing.B) {
	up := json.RawMessage(`{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"hello, world "}}`)
	for _, partial := range []bool{false, true} {
		name := "buffered"
		if partial {
			name = "partial"
		}
		b.Run(name, func(b *testing.B) {
			m := streamjson.NewMapper(streamjson.MapperOptions{Dialect: streamjson.DialectClaude, IncludePartialMessages: partial,
				NewID: func() string { return "id" }})
			e := streamjson.NewEncoder(io.Discard)
			m.Begin()
			b.ReportAllocs()
			for b.Loop() {
				ms, err := m.Update(up)
				if err != nil {
					b.Fatal(err)
				}
				for _, x := range ms {
					if err := e.Encode(x); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
