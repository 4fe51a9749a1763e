package streamjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// Content is the content of a user message: a plain string (Text, with
// IsText true) or an array of content blocks.
type Content struct {
	Text   string
	IsText bool
	Blocks []ContentBlock
}

// TextContent returns the content that is the string s.
func TextContent(s string) Content { return Content{Text: s, IsText: true} }

// UnmarshalJSON accepts a JSON string or an array of content blocks.
func (c *Content) UnmarshalJSON(b []byte) error {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) > 0 && b[0] == '"' {
		*c = Content{IsText: true}
		return json.Unmarshal(b, &c.Text)
	}
	*c = Content{}
	return json.Unmarshal(b, &c.Blocks)
}

func (c Content) appendJSON(b []byte) ([]byte, error) {
	if c.IsText {
		return appendString(b, c.Text), nil
	}
	return appendValue(b, reflect.ValueOf(c.Blocks))
}

// Content block types of the Anthropic Messages API used in stream-json.
const (
	BlockText       = "text"
	BlockThinking   = "thinking"
	BlockToolUse    = "tool_use"
	BlockToolResult = "tool_result"
	BlockImage      = "image"
)

// ContentBlock is one block of a message's content. Type selects the
// fields: text (Text), thinking (Thinking, Signature), tool_use (ID, Name,
// Input), tool_result (ToolUseID, Content, IsError), image (Source). A
// block of another type keeps its JSON in Raw and is written back as is.
type ContentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"` // string or blocks
	IsError   *bool           `json:"is_error,omitempty"`
	Source    *ImageSource    `json:"source,omitempty"`
	Raw       json.RawMessage `json:"-"`
}

// ImageSource is the source of an image block: base64 data (Type
// "base64", MediaType, Data) or a URL (Type "url", URL).
type ImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// knownBlock reports whether t is a block type with typed fields.
func knownBlock(t string) bool {
	switch t {
	case BlockText, BlockThinking, BlockToolUse, BlockToolResult, BlockImage:
		return true
	}
	return false
}

// UnmarshalJSON decodes a block; an unknown type keeps the block in Raw.
func (cb *ContentBlock) UnmarshalJSON(b []byte) error {
	type plain ContentBlock
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if !knownBlock(p.Type) {
		*cb = ContentBlock{Type: p.Type, Raw: append(json.RawMessage(nil), b...)}
		return nil
	}
	p.Raw = nil
	*cb = ContentBlock(p)
	return nil
}

func (cb ContentBlock) appendJSON(b []byte) ([]byte, error) {
	if cb.Raw != nil {
		return appendRaw(b, cb.Raw)
	}
	b = append(b, `{"type":`...)
	b = appendString(b, cb.Type)
	var err error
	switch cb.Type {
	case BlockText:
		b = append(b, `,"text":`...)
		b = appendString(b, cb.Text)
	case BlockThinking:
		b = append(b, `,"thinking":`...)
		b = appendString(b, cb.Thinking)
		if cb.Signature != "" {
			b = append(b, `,"signature":`...)
			b = appendString(b, cb.Signature)
		}
	case BlockToolUse:
		b = append(b, `,"id":`...)
		b = appendString(b, cb.ID)
		b = append(b, `,"name":`...)
		b = appendString(b, cb.Name)
		b, err = appendRawMember(b, "input", cb.Input)
	case BlockToolResult:
		b = append(b, `,"tool_use_id":`...)
		b = appendString(b, cb.ToolUseID)
		if b, err = appendRawMember(b, "content", cb.Content); err == nil && cb.IsError != nil {
			b = append(b, `,"is_error":`...)
			b = fmt.Appendf(b, "%t", *cb.IsError)
		}
	case BlockImage:
		if cb.Source != nil {
			b = append(b, `,"source":`...)
			b, err = appendValue(b, reflect.ValueOf(cb.Source))
		}
	}
	return append(b, '}'), err
}

// appendRawMember appends ,"name":raw when raw is present.
func appendRawMember(b []byte, name string, raw []byte) ([]byte, error) {
	if len(raw) == 0 {
		return b, nil
	}
	b = append(b, ',')
	b = appendString(b, name)
	b = append(b, ':')
	return appendRaw(b, raw)
}

// TextBlock returns a text block.
func TextBlock(text string) ContentBlock { return ContentBlock{Type: BlockText, Text: text} }

// ToolResultBlock returns a tool_result block for the tool_use id with
// text as its content.
func ToolResultBlock(toolUseID, text string, isError bool) ContentBlock {
	c, _ := Marshal(text)
	return ContentBlock{Type: BlockToolResult, ToolUseID: toolUseID, Content: c, IsError: &isError}
}
