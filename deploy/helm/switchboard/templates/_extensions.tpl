{{/*
What operators add to a component's pods without forking the chart: labels and annotations,
identity, placement, extra variables, volumes and containers, and TLS on the gRPC hop. Each template
takes the component context, (dict "root" $ "component" c "values" v), like the shared ones.
*/}}

{{/*
Pod template labels: the chart's own, then podLabels. A podLabels key never replaces a chart label:
the Deployment's selector, the Services and the NetworkPolicies find the pods by those.
*/}}
{{- define "switchboard.podLabels" -}}
{{- $labels := include "switchboard.labels" . | fromYaml -}}
{{- toYaml (merge $labels (deepCopy (.values.podLabels | default dict))) -}}
{{- end }}

{{/*
Pod annotations: the Prometheus scrape hints, under podAnnotations so that an operator's value of
the same key replaces the chart's (one key, once; a duplicate key is invalid YAML to strict parsers).
*/}}
{{- define "switchboard.podAnnotations" -}}
{{- $scrape := dict "prometheus.io/scrape" "true" "prometheus.io/port" "9464" -}}
{{- toYaml (merge (deepCopy (.values.podAnnotations | default dict)) $scrape) -}}
{{- end }}

{{/*
The component's ServiceAccount name: serviceAccount.name, or "<fullname>-<component>" for one the
chart creates; "" keeps the namespace's default account.
*/}}
{{- define "switchboard.serviceAccountName" -}}
{{- $sa := .values.serviceAccount | default dict -}}
{{- if $sa.create -}}
{{- $sa.name | default (include "switchboard.componentName" .) -}}
{{- else -}}
{{- $sa.name | default "" -}}
{{- end -}}
{{- end }}

{{/*
Pod identity and placement: the service account (its API token mounted only when asked for: no
Switchboard process calls the Kubernetes API; IRSA and Workload Identity inject their own token),
priority class, and topology spread constraints, each given the component's selector labels when it
names none, so a constraint written once counts this component's pods only.
*/}}
{{- define "switchboard.podPlacement" -}}
{{- $v := .values -}}
{{- with include "switchboard.serviceAccountName" . }}
serviceAccountName: {{ . | quote }}
{{- end }}
automountServiceAccountToken: {{ ($v.serviceAccount | default dict).automountServiceAccountToken | default false }}
{{- with $v.priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- $selector := include "switchboard.selectorLabels" . | fromYaml -}}
{{- $constraints := list -}}
{{- range $v.topologySpreadConstraints | default list -}}
{{- $constraint := deepCopy . -}}
{{- if not (hasKey $constraint "labelSelector") -}}
{{- $_ := set $constraint "labelSelector" (dict "matchLabels" $selector) -}}
{{- end -}}
{{- $constraints = append $constraints $constraint -}}
{{- end -}}
{{- with $constraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
The operator's extraEnv entries (full EnvVar objects: value, or valueFrom of a Secret, ConfigMap or
field), after the chart's own. A name the chart sets is refused: the container would get it twice,
and for a Secret the chart mounts (CLUSTER_SECRET...) its value would reach the environment.
Takes the context plus "taken": the names the chart sets on the container.
*/}}
{{- define "switchboard.extraEnv" -}}
{{- $taken := .taken -}}
{{- range $v := .values.extraEnv | default list }}
{{- if or (has $v.name $taken) (has (trimSuffix "_FILE" $v.name) $taken) }}
{{- fail (printf "extraEnv: %s is set by the chart; change it through the chart's own values" $v.name) }}
{{- end }}
- {{ toYaml $v | indent 2 | trim }}
{{- end }}
{{- end }}

{{/*
The names of the variables the chart sets on a component's main container: its plain and downward
API variables (given as dicts), each Secret it mounts as a file (NAME and NAME_FILE; the tracing
headers among them) and the gRPC TLS files.
*/}}
{{- define "switchboard.chartEnvNames" -}}
{{- $names := concat (keys .env) (keys (.fieldEnv | default dict)) -}}
{{- range include "switchboard.secretItems" .ctx | fromYamlArray -}}
{{- $names = append $names .env -}}
{{- $names = append $names (printf "%s_FILE" .env) -}}
{{- end -}}
{{- range include "switchboard.grpcTls" (merge (dict "part" "env") .ctx) | fromYamlArray -}}
{{- $names = append $names .name -}}
{{- end -}}
{{- toJson $names -}}
{{- end }}

{{/*
TLS on the gateway -> worker gRPC hop (grpcTls), as one of (merge (dict "part" <part>) ctx):
  env     the GRPC_TLS_* variables (a worker: its server certificate, and the CA client certificates
          must chain to; the gateway: the CA worker certificates must chain to, its client
          certificate, the name checked) and, on workers, GRPC_HEALTH_PORT
  mount   the certificate Secret, read-only
  volume  that Secret: tls.crt, tls.key and ca.crt, cert-manager's layout
  port    the worker's plaintext health port, declared on the container
Nothing when grpcTls is off. The Secret is mounted whole rather than by subPath, so the kubelet
swaps in a renewed certificate, which the processes read again.
*/}}
{{- define "switchboard.grpcTls" -}}
{{- $tls := .root.Values.grpcTls -}}
{{- if and $tls $tls.enabled -}}
{{- $dir := "/var/run/secrets/switchboard-grpc-tls" -}}
{{- $gateway := eq .component "gateway" -}}
{{- $secret := ternary ($tls.clientSecret | default $tls.serverSecret) $tls.serverSecret $gateway -}}
{{- if eq .part "env" }}
- { name: GRPC_TLS_CERT_FILE, value: {{ printf "%s/tls.crt" $dir | quote }} }
- { name: GRPC_TLS_KEY_FILE, value: {{ printf "%s/tls.key" $dir | quote }} }
- { name: GRPC_TLS_CA_FILE, value: {{ printf "%s/ca.crt" $dir | quote }} }
{{- if and $gateway $tls.serverName }}
- { name: GRPC_TLS_SERVER_NAME, value: {{ $tls.serverName | quote }} }
{{- end }}
{{- if not $gateway }}
- { name: GRPC_HEALTH_PORT, value: {{ $tls.healthPort | toString | quote }} }
{{- end }}
{{- else if eq .part "mount" }}
- { name: grpc-tls, mountPath: {{ $dir }}, readOnly: true }
{{- else if eq .part "volume" }}
- name: grpc-tls
  secret:
    secretName: {{ $secret | quote }}
    # 0440: readable by the pod's fsGroup, writable by no one.
    defaultMode: 288
    items:
      - { key: tls.crt, path: tls.crt }
      - { key: tls.key, path: tls.key }
      - { key: ca.crt, path: ca.crt }
{{- else if eq .part "port" }}
{{- if not $gateway }}
- { name: grpc-health, containerPort: {{ $tls.healthPort }}, protocol: TCP }
{{- end }}
{{- else -}}
{{- fail (printf "switchboard.grpcTls: unknown part %q" .part) -}}
{{- end }}
{{- end -}}
{{- end }}

{{/*
The port a worker's kubelet probes call: the gRPC port, or with grpcTls the plaintext health port
(the kubelet's gRPC probes cannot speak TLS).
*/}}
{{- define "switchboard.probePort" -}}
{{- if .root.Values.grpcTls.enabled -}}{{ .root.Values.grpcTls.healthPort }}{{- else -}}50051{{- end -}}
{{- end }}

{{/*
The fewest pods a component runs when nothing fails: autoscaling.minReplicas where an autoscaler
owns the count (the gateway's HPA, KEDA for the workers), else replicas.
*/}}
{{- define "switchboard.leastReplicas" -}}
{{- $autoscaled := ternary .values.autoscaling.enabled .root.Values.keda.enabled (eq .component "gateway") -}}
{{- if $autoscaled }}{{ .values.autoscaling.minReplicas }}{{ else }}{{ .values.replicas }}{{ end -}}
{{- end }}

{{/*
The egress rule to DNS every policed pod gets (networkPolicies.dns): its peers, plus each
nodeLocalAddresses entry as an ipBlock (NodeLocal DNSCache answers on a link-local address and on
the kube-dns Service IP, neither of which is a pod a selector could match), on its ports (53 and
OpenShift's 5353 by default). No peers at all: any destination, on those ports only.
*/}}
{{- define "switchboard.dnsEgressRule" -}}
{{- $dns := .Values.networkPolicies.dns -}}
{{- $to := $dns.to | default list -}}
{{- range $dns.nodeLocalAddresses | default list -}}
{{- $cidr := ternary . (printf "%s/%s" . (ternary "128" "32" (contains ":" .))) (contains "/" .) -}}
{{- $to = append $to (dict "ipBlock" (dict "cidr" $cidr)) -}}
{{- end -}}
# DNS.
- to:
    {{- toYaml $to | nindent 4 }}
  ports:
    {{- toYaml $dns.ports | nindent 4 }}
{{- end }}

{{/*
"true" when a component exports traces (docs/tracing.md): tracing.otlpEndpoint is set, or its own
env names an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); ""
otherwise. Such a component gets the headers Secret (as a file, switchboard.secretItems) and egress
to networkPolicies.otelCollector.
*/}}
{{- define "switchboard.traces" -}}
{{- $env := .values.env | default dict -}}
{{- if or .root.Values.tracing.otlpEndpoint (index $env "OTEL_EXPORTER_OTLP_ENDPOINT") (index $env "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") -}}true{{- end -}}
{{- end }}

{{/*
The plain tracing variables of a component, as a YAML map its env may override:
OTEL_EXPORTER_OTLP_ENDPOINT from tracing.otlpEndpoint.
*/}}
{{- define "switchboard.tracingEnv" -}}
{{- $env := dict -}}
{{- with .root.Values.tracing.otlpEndpoint }}{{ $_ := set $env "OTEL_EXPORTER_OTLP_ENDPOINT" . }}{{ end -}}
{{- toYaml $env -}}
{{- end }}
