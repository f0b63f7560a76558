{{/*
Shared templates. Workers are rendered by ranging over "switchboard.workers"; nothing is copied
per service. Component-scoped templates take a dict: (dict "root" $ "component" "llm").
*/}}

{{/* The workers, in the order the gateway knows them. */}}
{{- define "switchboard.workers" -}}
llm whisper diffusion animation browser
{{- end }}

{{/*
The workers the gateway calls over gRPC (<WORKER>_ADDR, gateway -> worker NetworkPolicies). The
animation worker is not among them: it takes its jobs from the JetStream work queue, and its gRPC
port serves only grpc.health.v1 to the kubelet's probes.
*/}}
{{- define "switchboard.grpcWorkers" -}}
llm whisper diffusion browser
{{- end }}

{{/* Workers whose values block has enabled: true, space-separated. */}}
{{- define "switchboard.enabledWorkers" -}}
{{- $enabled := list -}}
{{- range $w := splitList " " (include "switchboard.workers" .) -}}
{{- if (index $.Values $w).enabled -}}{{- $enabled = append $enabled $w -}}{{- end -}}
{{- end -}}
{{- join " " $enabled -}}
{{- end }}

{{/* Every enabled component (gateway and workers), space-separated. */}}
{{- define "switchboard.enabledComponents" -}}
{{- $enabled := list -}}
{{- if .Values.gateway.enabled -}}{{- $enabled = append $enabled "gateway" -}}{{- end -}}
{{- range $w := splitList " " (include "switchboard.enabledWorkers" .) -}}
{{- if $w -}}{{- $enabled = append $enabled $w -}}{{- end -}}
{{- end -}}
{{- join " " $enabled -}}
{{- end }}

{{- define "switchboard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{- define "switchboard.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end }}

{{/* "<fullname>-<component>": the name of a component's Deployment, Service, PDB... */}}
{{- define "switchboard.componentName" -}}
{{- printf "%s-%s" (include "switchboard.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/*
Labels that find a component's pods across releases (skaffold installs one release per service):
network policies select peers with these.
*/}}
{{- define "switchboard.peerLabels" -}}
app.kubernetes.io/name: {{ include "switchboard.name" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "switchboard.selectorLabels" -}}
{{ include "switchboard.peerLabels" . }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end }}

{{- define "switchboard.labels" -}}
{{ include "switchboard.selectorLabels" . }}
app.kubernetes.io/part-of: switchboard
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* "repository:tag"; skaffold passes tag as "<tag>@<digest>". */}}
{{- define "switchboard.image" -}}
{{- printf "%s:%s" .image.repository (.image.tag | default .root.Chart.AppVersion) -}}
{{- end }}

{{- define "switchboard.adminTokenSecretName" -}}
{{- .Values.adminToken.existingSecret | default (printf "%s-admin-token" (include "switchboard.fullname" .)) -}}
{{- end }}

{{- define "switchboard.clusterSecretName" -}}
{{- .Values.clusterAuth.existingSecret | default (printf "%s-cluster-secret" (include "switchboard.fullname" .)) -}}
{{- end }}

{{/*
CLUSTER_SECRET from its Secret, for the gateway and every worker: gateway -> worker calls carry it
and workers refuse calls without it. Never a literal (validate.yaml rejects it in env).
*/}}
{{- define "switchboard.clusterSecretEnv" -}}
{{ include "switchboard.secretEnv" (dict "name" "CLUSTER_SECRET" "secret" (include "switchboard.clusterSecretName" .) "key" .Values.clusterAuth.existingSecretKey) }}
{{- end }}

{{/* An env entry taken from a Secret: (dict "name" "ADMIN_TOKEN" "secret" "s" "key" "token"). */}}
{{- define "switchboard.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret | quote }}
      key: {{ .key | quote }}
{{- end }}

{{/*
Plain env entries from a dict, sorted by name; the values block's `env` is merged last so an
operator can override any of them.
*/}}
{{- define "switchboard.plainEnv" -}}
{{- $env := .env -}}
{{- range $name := keys $env | sortAlpha }}
- name: {{ $name }}
  value: {{ index $env $name | toString | quote }}
{{- end }}
{{- end }}

{{/*
Env entries from the downward API, sorted by name: (dict "env" (dict "BROWSER_ADVERTISE_HOST"
"status.podIP")). The browser worker advertises its pod IP this way.
*/}}
{{- define "switchboard.fieldEnv" -}}
{{- $env := .env -}}
{{- range $name := keys $env | sortAlpha }}
- name: {{ $name }}
  valueFrom:
    fieldRef:
      fieldPath: {{ index $env $name | quote }}
{{- end }}
{{- end }}

{{/* NATS_URL from the URL or from a Secret, unless the values block's env sets it. */}}
{{- define "switchboard.natsEnv" -}}
{{- if not (hasKey .values.env "NATS_URL") -}}
{{- if .root.Values.nats.existingSecret }}
{{ include "switchboard.secretEnv" (dict "name" "NATS_URL" "secret" .root.Values.nats.existingSecret "key" .root.Values.nats.existingSecretKey) }}
{{- else }}
- name: NATS_URL
  value: {{ .root.Values.nats.url | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Pod-level settings shared by every component: identity, scheduling (plus the GPU toleration and
runtime class when gpu.enabled), pull secrets, grace period.
*/}}
{{- define "switchboard.podSpecCommon" -}}
{{- $v := .values -}}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
automountServiceAccountToken: false
enableServiceLinks: false
terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
securityContext:
  runAsNonRoot: true
  runAsUser: {{ .root.Values.securityContext.runAsUser }}
  runAsGroup: {{ .root.Values.securityContext.runAsGroup }}
  fsGroup: {{ .root.Values.securityContext.fsGroup }}
  seccompProfile:
    type: RuntimeDefault
{{- if and $v.gpu.enabled $v.gpu.runtimeClassName }}
runtimeClassName: {{ $v.gpu.runtimeClassName }}
{{- end }}
{{- with $v.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- $tolerations := $v.tolerations | default list -}}
{{- if $v.gpu.enabled -}}
{{- $tolerations = append $tolerations (dict "key" $v.gpu.resourceName "operator" "Exists" "effect" "NoSchedule") -}}
{{- end -}}
{{- with $tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The container security context: never root, nothing writable but the mounted volumes. */}}
{{- define "switchboard.containerSecurityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: {{ .Values.securityContext.runAsUser }}
  runAsGroup: {{ .Values.securityContext.runAsGroup }}
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: [ALL]
{{- end }}

{{/* resources, plus the GPU limit when gpu.enabled (extended resources: requests follow limits). */}}
{{- define "switchboard.resources" -}}
{{- $resources := deepCopy (.values.resources | default dict) -}}
{{- if .values.gpu.enabled -}}
{{- $limits := deepCopy (get $resources "limits" | default dict) -}}
{{- $_ := set $limits .values.gpu.resourceName (.values.gpu.count | int) -}}
{{- $_ := set $resources "limits" $limits -}}
{{- end -}}
resources:
  {{- if $resources }}
  {{- toYaml $resources | nindent 2 }}
  {{- else }} {}
  {{- end }}
{{- end }}

{{/*
The drain before SIGTERM: endpoints and clients drop the pod while it still serves. None with
preStopSleepSeconds 0 (the animation worker: no Service routes callers to it, so there is nothing to
drain; it stops pulling jobs on SIGTERM).
*/}}
{{- define "switchboard.preStop" -}}
{{- if .values.preStopSleepSeconds -}}
lifecycle:
  preStop:
    exec:
      command: ["sleep", "{{ .values.preStopSleepSeconds }}"]
{{- end }}
{{- end }}

{{/*
NetworkPolicy peers for the public internet: every IPv4 and IPv6 address but the private, shared
(CGNAT) and link-local (cloud metadata) ranges, this cluster's own (networkPolicies.clusterCIDRs)
and `except`: (dict "root" $ "except" (list "203.0.113.0/24")).
*/}}
{{- define "switchboard.publicInternetPeers" -}}
{{- $v4except := list "10.0.0.0/8" "172.16.0.0/12" "192.168.0.0/16" "169.254.0.0/16" "100.64.0.0/10" -}}
{{- $v6except := list "fc00::/7" "fe80::/10" -}}
{{- range (concat .root.Values.networkPolicies.clusterCIDRs (.except | default list)) -}}
{{- if contains ":" . }}{{ $v6except = append $v6except . }}{{ else }}{{ $v4except = append $v4except . }}{{ end -}}
{{- end -}}
- ipBlock:
    cidr: 0.0.0.0/0
    except:
      {{- toYaml (uniq $v4except) | nindent 6 }}
- ipBlock:
    cidr: ::/0
    except:
      {{- toYaml (uniq $v6except) | nindent 6 }}
{{- end }}

{{/*
"true" when a worker block serves a configured avatar back-end: "avatar" in backends and the vendor
key in avatar.existingSecret. Only then does it get AVATAR_BASE_URL, AVATAR_API_KEY and HTTPS
egress; without them the worker reports the back-end unconfigured and the gateway refuses avatar
jobs (503 unavailable). "" otherwise.
*/}}
{{- define "switchboard.avatarConfigured" -}}
{{- if and (hasKey .values "backends") (has "avatar" .values.backends) .values.avatar.existingSecret -}}true{{- end -}}
{{- end }}

{{/*
host:port of the NATS HTTP monitor that KEDA's JetStream scaler reads: keda.nats.monitoringEndpoint,
else the host of nats.url on port 8222 (a bare service name is qualified with the release namespace,
since KEDA runs in its own). A NATS URL kept in a Secret cannot be read here: then the endpoint must
be given.
*/}}
{{- define "switchboard.natsMonitoringEndpoint" -}}
{{- if .Values.keda.nats.monitoringEndpoint -}}
{{- .Values.keda.nats.monitoringEndpoint -}}
{{- else if .Values.nats.existingSecret -}}
{{- fail "keda.nats.monitoringEndpoint: the NATS URL comes from nats.existingSecret, so the chart cannot derive the NATS monitor (host:8222) for KEDA's JetStream trigger; set it" -}}
{{- else -}}
{{- $host := (urlParse (first (splitList "," .Values.nats.url) | trim)).hostname -}}
{{- if contains ":" $host -}}
{{- printf "[%s]:8222" $host -}}
{{- else if contains "." $host -}}
{{- printf "%s:8222" $host -}}
{{- else -}}
{{- printf "%s.%s.svc:8222" $host .Release.Namespace -}}
{{- end -}}
{{- end -}}
{{- end }}
