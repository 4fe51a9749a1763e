package streamjson

import (
	"fmt"

	"github.com/acpmux/acpmux/acp"
)

// PromptBlock is one ACP ContentBlock of the prompt of session/prompt
// (https://agentclientprotocol.com/protocol/v1/content): text (Text),
// image (Data, MimeType) or resource_link (URI, Name).
type PromptBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
}

// Prompt returns the prompt of session/prompt for a script's user message:
// string content is one text block; text blocks stay text; a base64 image
// becomes an ACP image; an image by URL becomes a resource_link. Any other
// block (tool_result, document, …), an empty prompt, or a message whose
// role is not "user" returns an error wrapping acp.ErrInvalidParams.
func Prompt(u *User) ([]PromptBlock, error) {
	if u.Message.Role != "" && u.Message.Role != "user" {
		return nil, fmt.Errorf("%w: user message with role %q", acp.ErrInvalidParams, u.Message.Role)
	}
	c := u.Message.Content
	if c.IsText {
		if c.Text == "" {
			return nil, fmt.Errorf("%w: empty prompt", acp.ErrInvalidParams)
		}
		return []PromptBlock{{Type: "text", Text: c.Text}}, nil
	}
	out := make([]PromptBlock, 0, len(c.Blocks))
	for i, b := range c.Blocks {
		p, err := promptBlock(b)
		if err != nil {
			return nil, fmt.Errorf("%w: content block %d: %v", acp.ErrInvalidParams, i, err)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: empty prompt", acp.ErrInvalidParams)
	}
	return out, nil
}

func promptBlock(b ContentBlock) (PromptBlock, error) {
	switch b.Type {
	case BlockText:
		return PromptBlock{Type: "text", Text: b.Text}, nil
	case BlockImage:
		switch s := b.Source; {
		case s != nil && s.Type == "base64" && s.Data != "" && s.MediaType != "":
			return PromptBlock{Type: "image", Data: s.Data, MimeType: s.MediaType}, nil
		case s != nil && s.Type == "url" && s.URL != "":
			return PromptBlock{Type: "resource_link", URI: s.URL, Name: s.URL}, nil
		}
		return PromptBlock{}, fmt.Errorf("image without base64 data and media_type or a url")
	}
	return PromptBlock{}, fmt.Errorf("unsupported block type %q", b.Type)
}
