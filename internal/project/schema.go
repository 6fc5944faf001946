package project

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Schema is the part of a CRD's OpenAPI v3 schema (openAPIV3Schema) that
// validates a view's paths. Unmarshal it from the CRD's JSON.
type Schema struct {
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Properties           map[string]*Schema `json:"properties"`
	Items                *Schema            `json:"items"`
	AdditionalProperties *SchemaOrBool      `json:"additionalProperties"`
	PreserveUnknown      bool               `json:"x-kubernetes-preserve-unknown-fields"`
	IntOrString          bool               `json:"x-kubernetes-int-or-string"`
}

// SchemaOrBool is additionalProperties: a schema, or true/false.
type SchemaOrBool struct {
	Allows bool
	Schema *Schema
}

// UnmarshalJSON reads a bool or a schema.
func (s *SchemaOrBool) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch string(b) {
	case "true":
		s.Allows = true
		return nil
	case "false", "null":
		return nil
	}
	s.Allows = true
	s.Schema = &Schema{}
	return json.Unmarshal(b, s.Schema)
}

// schemaShape is a node of a CRD's schema. At the root, metadata is
// described by metav1.ObjectMeta (CRD schemas leave it out).
type schemaShape struct {
	s    *Schema
	root bool
}

func (s schemaShape) kind() shapeKind {
	switch {
	case s.s == nil:
		return kAny
	case s.s.IntOrString:
		return kAny
	}
	switch s.s.Type {
	case "string":
		return kString
	case "integer":
		return kInt
	case "number":
		return kFloat
	case "boolean":
		return kBool
	case "array":
		return kList
	case "object":
		if len(s.s.Properties) == 0 && s.s.AdditionalProperties != nil && s.s.AdditionalProperties.Allows && !s.s.PreserveUnknown {
			return kMap
		}
		if len(s.s.Properties) == 0 && s.s.PreserveUnknown {
			return kAny
		}
		return kMessage
	case "":
		if len(s.s.Properties) > 0 || s.root {
			return kMessage
		}
		return kAny
	}
	return kOther
}

func (s schemaShape) field(name string) (shape, uint64, bool) {
	if s.root && name == "metadata" {
		return newGoShape(reflect.TypeFor[metav1.ObjectMeta]()), 0, true
	}
	if s.s == nil {
		return schemaShape{}, 0, true
	}
	if p, ok := s.s.Properties[name]; ok {
		return schemaShape{s: p}, 0, true
	}
	if s.s.PreserveUnknown || s.kind() == kAny {
		return schemaShape{}, 0, true // anything goes below
	}
	if ap := s.s.AdditionalProperties; ap != nil && ap.Allows {
		return schemaShape{s: ap.Schema}, 0, true
	}
	return nil, 0, false
}

func (s schemaShape) elem() shape {
	if s.s == nil {
		return schemaShape{}
	}
	if s.s.Items != nil {
		return schemaShape{s: s.s.Items}
	}
	if ap := s.s.AdditionalProperties; ap != nil {
		return schemaShape{s: ap.Schema}
	}
	return schemaShape{}
}

func (s schemaShape) bits() int {
	if s.kind() == kInt {
		return 64
	}
	return 0
}

func (s schemaShape) goType() reflect.Type { return nil }

func (s schemaShape) names() []string {
	if s.s == nil {
		return nil
	}
	out := make([]string, 0, len(s.s.Properties)+1)
	for n := range s.s.Properties {
		out = append(out, n)
	}
	if s.root && s.s.Properties["metadata"] == nil {
		out = append(out, "metadata")
	}
	sort.Strings(out)
	return out
}

func (s schemaShape) String() string {
	if s.s == nil {
		return "any value"
	}
	if s.s.Type == "" {
		return "schema object"
	}
	return "schema " + s.s.Type
}
