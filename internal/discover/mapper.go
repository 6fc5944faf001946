package discover

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Mapper returns a RESTMapper over the document, ranking matches as
// kubectl does: the core v1 first, then each group's preferred version in
// the server's order, then its other versions, then any version of each
// group. Subresources are not mapped; a resource without a singular name
// gets the one guessed from its kind.
func (d *Document) Mapper() meta.RESTMapperWithContext {
	var byVersion meta.MultiRESTMapperWithContext
	resources := []schema.GroupVersionResource{{Version: "v1", Resource: meta.AnyResource}}
	kinds := []schema.GroupVersionKind{{Version: "v1", Kind: meta.AnyKind}}
	rank := func(gv schema.GroupVersion) {
		resources = append(resources, gv.WithResource(meta.AnyResource))
		kinds = append(kinds, gv.WithKind(meta.AnyKind))
	}
	for _, g := range d.Groups {
		preferred := g.PreferredVersion.Version
		if _, ok := g.Resources[preferred]; ok && preferred != "" {
			rank(schema.GroupVersion{Group: g.Name, Version: preferred})
		}
		for _, v := range g.Versions {
			list, ok := g.Resources[v.Version]
			if !ok {
				continue
			}
			gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
			if v.Version != preferred {
				rank(gv)
			}
			m := meta.NewDefaultRESTMapper([]schema.GroupVersion{gv})
			for _, r := range list {
				if strings.Contains(r.Name, "/") {
					continue // a subresource
				}
				scope := meta.RESTScopeRoot
				if r.Namespaced {
					scope = meta.RESTScopeNamespace
				}
				plural, singular := gv.WithResource(r.Name), gv.WithResource(r.SingularName)
				if r.SingularName == "" {
					_, singular = meta.UnsafeGuessKindToResource(gv.WithKind(r.Kind))
				}
				m.AddSpecific(gv.WithKind(strings.ToLower(r.Kind)), plural, singular, scope)
				m.AddSpecific(gv.WithKind(r.Kind), plural, singular, scope)
				m.Add(gv.WithKind(r.Kind+"List"), scope) // as client-go's mapper does
			}
			m.Add(gv.WithKind("List"), meta.RESTScopeRoot)
			byVersion = append(byVersion, m)
		}
	}
	for _, g := range d.Groups {
		rank(schema.GroupVersion{Group: g.Name, Version: meta.AnyVersion})
	}
	return &meta.PriorityRESTMapperWithContext{Delegate: byVersion, ResourcePriority: resources, KindPriority: kinds}
}

// Expand returns r with a short name ("po", "deploy") replaced by the
// resource it stands for, as kubectl expands it: a name that is some
// resource's plural or singular (in r's group, if set) is kept; else the
// first resource in discovery order having r's short name in r's group
// (any group if unset) wins, with its group and no version; else, with a
// group set, the first whose group starts with r's group. Anything else
// comes back unchanged.
func (d *Document) Expand(r schema.GroupVersionResource) schema.GroupVersionResource {
	for _, l := range d.Lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil || r.Group != "" && r.Group != gv.Group {
			continue
		}
		for _, res := range l.APIResources {
			if r.Resource == res.Name || r.Resource == res.SingularName {
				return r
			}
		}
	}
	for _, exact := range []bool{true, false} {
		if !exact && r.Group == "" {
			break
		}
		for _, l := range d.Lists {
			gv, err := schema.ParseGroupVersion(l.GroupVersion)
			if err != nil {
				continue
			}
			if exact && r.Group != "" && r.Group != gv.Group || !exact && !strings.HasPrefix(gv.Group, r.Group) {
				continue
			}
			for _, res := range l.APIResources {
				for _, short := range res.ShortNames {
					if short != r.Resource {
						continue
					}
					if exact {
						return schema.GroupVersionResource{Group: gv.Group, Resource: res.Name}
					}
					r.Group, r.Resource = gv.Group, res.Name
					return r
				}
			}
		}
	}
	return r
}
