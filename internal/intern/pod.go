package intern

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Pod specs are where most of a pod's repeated strings live (images,
// container and volume names, mount paths), so the interner knows them,
// and the workload types that embed one (see workload.go). Other types get
// only their ObjectMeta interned.

// typed interns the type-specific parts of obj.
func (in *Interner) typed(obj any) {
	switch o := obj.(type) {
	case *corev1.Pod:
		in.podSpec(&o.Spec)
		in.podStatus(&o.Status)
	case *corev1.PodTemplate:
		in.podSpec(&o.Template.Spec)
	default:
		if s := workloadPodSpec(obj); s != nil {
			in.podSpec(s)
		}
	}
}

func (in *Interner) podSpec(s *corev1.PodSpec) {
	s.NodeName = in.str(s.NodeName)
	s.ServiceAccountName = in.str(s.ServiceAccountName)
	s.DeprecatedServiceAccount = in.str(s.DeprecatedServiceAccount)
	s.SchedulerName = in.str(s.SchedulerName)
	s.PriorityClassName = in.str(s.PriorityClassName)
	s.RestartPolicy = typedStr(in, s.RestartPolicy)
	s.DNSPolicy = typedStr(in, s.DNSPolicy)
	s.Subdomain = in.str(s.Subdomain)
	for i := range s.Volumes {
		v := &s.Volumes[i]
		v.Name = in.str(v.Name)
		if v.ConfigMap != nil {
			v.ConfigMap.Name = in.str(v.ConfigMap.Name)
		}
		if v.Secret != nil {
			v.Secret.SecretName = in.str(v.Secret.SecretName)
		}
		if v.PersistentVolumeClaim != nil {
			v.PersistentVolumeClaim.ClaimName = in.str(v.PersistentVolumeClaim.ClaimName)
		}
		if v.Projected != nil {
			for j := range v.Projected.Sources {
				p := &v.Projected.Sources[j]
				if p.ServiceAccountToken != nil {
					p.ServiceAccountToken.Path = in.str(p.ServiceAccountToken.Path)
				}
				if p.ConfigMap != nil {
					p.ConfigMap.Name = in.str(p.ConfigMap.Name)
				}
			}
		}
	}
	for i := range s.Tolerations {
		t := &s.Tolerations[i]
		t.Key = in.str(t.Key)
		t.Operator = typedStr(in, t.Operator)
		t.Value = in.str(t.Value)
		t.Effect = typedStr(in, t.Effect)
	}
	s.NodeSelector = in.strMap(s.NodeSelector)
	in.containers(s.InitContainers)
	in.containers(s.Containers)
}

func (in *Interner) containers(cs []corev1.Container) {
	for i := range cs {
		c := &cs[i]
		c.Name = in.str(c.Name)
		c.Image = in.str(c.Image)
		c.ImagePullPolicy = typedStr(in, c.ImagePullPolicy)
		c.TerminationMessagePath = in.str(c.TerminationMessagePath)
		c.TerminationMessagePolicy = typedStr(in, c.TerminationMessagePolicy)
		c.WorkingDir = in.str(c.WorkingDir)
		in.strList(c.Command)
		in.strList(c.Args)
		for j := range c.Ports {
			p := &c.Ports[j]
			p.Name = in.str(p.Name)
			p.Protocol = typedStr(in, p.Protocol)
		}
		for j := range c.Env {
			e := &c.Env[j]
			e.Name = in.str(e.Name)
			e.Value = in.str(e.Value)
			if f := e.ValueFrom; f != nil && f.FieldRef != nil {
				f.FieldRef.APIVersion = in.str(f.FieldRef.APIVersion)
				f.FieldRef.FieldPath = in.str(f.FieldRef.FieldPath)
			}
		}
		for j := range c.VolumeMounts {
			m := &c.VolumeMounts[j]
			m.Name = in.str(m.Name)
			m.MountPath = in.str(m.MountPath)
			m.SubPath = in.str(m.SubPath)
		}
		if in.has(shareLists) {
			c.Resources.Limits = in.resourceList(c.Resources.Limits)
			c.Resources.Requests = in.resourceList(c.Resources.Requests)
		}
		in.probe(c.LivenessProbe)
		in.probe(c.ReadinessProbe)
		in.probe(c.StartupProbe)
	}
}

func (in *Interner) probe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if g := p.HTTPGet; g != nil {
		g.Path = in.str(g.Path)
		g.Scheme = typedStr(in, g.Scheme)
		in.intOrString(&g.Port)
	}
	if e := p.Exec; e != nil {
		in.strList(e.Command)
	}
}

func (in *Interner) intOrString(v *intstr.IntOrString) {
	v.StrVal = in.str(v.StrVal)
}

func (in *Interner) podStatus(s *corev1.PodStatus) {
	s.Phase = typedStr(in, s.Phase)
	s.QOSClass = typedStr(in, s.QOSClass)
	s.HostIP = in.str(s.HostIP)
	for i := range s.HostIPs {
		s.HostIPs[i].IP = in.str(s.HostIPs[i].IP)
	}
	for i := range s.Conditions {
		c := &s.Conditions[i]
		c.Type = typedStr(in, c.Type)
		c.Status = typedStr(in, c.Status)
		c.Reason = in.str(c.Reason)
	}
	in.containerStatuses(s.InitContainerStatuses)
	in.containerStatuses(s.ContainerStatuses)
}

func (in *Interner) containerStatuses(cs []corev1.ContainerStatus) {
	for i := range cs {
		c := &cs[i]
		c.Name = in.str(c.Name)
		c.Image = in.str(c.Image)
		c.ImageID = in.str(c.ImageID)
		if w := c.State.Waiting; w != nil {
			w.Reason = in.str(w.Reason)
		}
		if t := c.State.Terminated; t != nil {
			t.Reason = in.str(t.Reason)
		}
		if t := c.LastTerminationState.Terminated; t != nil {
			t.Reason = in.str(t.Reason)
		}
	}
}
