{{/*
Shared templates. Workers are rendered by ranging over "switchboard.workers"; nothing is copied
per service. Component-scoped templates take a dict: (dict "root" $ "component" "llm").
*/}}

{{/*
The workers, in the order the gateway knows them, then the webhook sender: one Deployment and
headless Service each from workers.yaml. The gateway calls none of the sender's ports.
*/}}
{{- define "switchboard.workers" -}}
llm whisper diffusion animation browser webhooks
{{- end }}

{{/*
The workers the gateway calls over gRPC (<WORKER>_ADDR, gateway -> worker NetworkPolicies). The
animation worker and the webhook sender are not among them: they take their work from JetStream,
and their gRPC ports serve only grpc.health.v1 to the kubelet's probes.
*/}}
{{- define "switchboard.grpcWorkers" -}}
llm whisper diffusion browser
{{- end }}

{{/*
The components that connect to NATS, each as a NATS user of its own whose permissions the server
holds (libs/broker-auth: natsRoles, natsPermissions). The model workers (llm, whisper, diffusion)
never connect: they get no NATS_URL, no credentials and no egress to NATS.
*/}}
{{- define "switchboard.natsClients" -}}
gateway browser animation webhooks
{{- end }}

{{/*
The components that use the webhook database: the gateway registers endpoints and records test
events, the webhook sender delivers. Both open the endpoints' sealed secrets (webhookSecretsKey).
*/}}
{{- define "switchboard.webhookClients" -}}
gateway webhooks
{{- end }}

{{/*
The webhook database as a dict {url, existingSecret, existingSecretKey}: webhookDatabase when it
names a URL or a Secret, else usageDatabase's (the same server and database).
*/}}
{{- define "switchboard.webhookDatabase" -}}
{{- $own := .Values.webhookDatabase -}}
{{- if or $own.url $own.existingSecret -}}
{{- toYaml $own -}}
{{- else -}}
{{- toYaml .Values.usageDatabase -}}
{{- end -}}
{{- end }}

{{/* The components that connect to Redis (libs/broker-auth: redisRoles): the gateway's counters. */}}
{{- define "switchboard.redisClients" -}}
gateway
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

{{/*
"registry/repository:tag", fully qualified, so runtimes that refuse short names (CRI-O's enforcing
mode) pull what every other runtime would. A repository whose first segment is a registry host (has
a "." or ":", or is localhost: how runtimes tell) is used as it is, as skaffold passes it; any other
gets image.registry, else global.imageRegistry, else docker.io. skaffold passes tag as
"<tag>@<digest>".
*/}}
{{- define "switchboard.image" -}}
{{- $repository := .image.repository -}}
{{- $segments := splitList "/" $repository -}}
{{- $first := first $segments -}}
{{- if not (and (gt (len $segments) 1) (or (contains "." $first) (contains ":" $first) (eq $first "localhost"))) -}}
{{- $registry := .image.registry | default (.root.Values.global | default dict).imageRegistry | default "docker.io" | trimSuffix "/" -}}
{{- if and (eq $registry "docker.io") (eq (len $segments) 1) }}{{ $repository = printf "library/%s" $repository }}{{ end -}}
{{- $repository = printf "%s/%s" $registry $repository -}}
{{- end -}}
{{- printf "%s:%s" $repository (.image.tag | default .root.Chart.AppVersion) -}}
{{- end }}

{{- define "switchboard.adminTokenSecretName" -}}
{{- .Values.adminToken.existingSecret | default (printf "%s-admin-token" (include "switchboard.fullname" .)) -}}
{{- end }}

{{- define "switchboard.clusterSecretName" -}}
{{- .Values.clusterAuth.existingSecret | default (printf "%s-cluster-secret" (include "switchboard.fullname" .)) -}}
{{- end }}

{{- define "switchboard.keyPepperSecretName" -}}
{{- .Values.keyPepper.existingSecret | default (printf "%s-key-pepper" (include "switchboard.fullname" .)) -}}
{{- end }}

{{- define "switchboard.webhookSecretsKeySecretName" -}}
{{- .Values.webhookSecretsKey.existingSecret | default (printf "%s-webhook-secrets-key" (include "switchboard.fullname" .)) -}}
{{- end }}

{{/*
"true" when a component uses the object store: the gateway (it serves stored files and keeps
animation uploads) and the workers with usesObjectStore.
*/}}
{{- define "switchboard.usesObjectStore" -}}
{{- if or (eq .component "gateway") .values.usesObjectStore -}}true{{- end -}}
{{- end }}

{{/*
"true" when a worker's pod copies its models from the object store first (models.sync, no claim):
its init container then needs S3 credentials and the object store's address.
*/}}
{{- define "switchboard.syncsModels" -}}
{{- $models := .root.Values.models -}}
{{- if and .values.usesModels $models.sync.enabled (not $models.existingClaim) -}}true{{- end -}}
{{- end }}

{{/*
"true" when S3 credentials are configured at all (s3.existingSecret, a Secret per component, or
s3.webIdentity):
then every component that uses the object store talks to S3; otherwise each keeps a local folder.
*/}}
{{- define "switchboard.s3Enabled" -}}
{{- if or .Values.s3.existingSecret .Values.s3.componentSecrets .Values.s3.webIdentity.enabled -}}true{{- end -}}
{{- end }}

{{/*
The S3 credentials Secret of a component: its own (s3.componentSecrets.<component>, credentials
limited to its prefixes), else the shared s3.existingSecret; "" when neither.
*/}}
{{- define "switchboard.s3Secret" -}}
{{- index (.root.Values.s3.componentSecrets | default dict) .component | default .root.Values.s3.existingSecret -}}
{{- end }}

{{/*
The plain broker variables of a component, as a YAML map its env may override: NATS_URL and
NATS_USER for the NATS clients, REDIS_URL and REDIS_USER for the Redis clients. Passwords, and URLs
kept in a Secret, come as files (switchboard.secretItems).
*/}}
{{- define "switchboard.brokerEnv" -}}
{{- $V := .root.Values -}}
{{- $env := dict -}}
{{- if has .component (splitList " " (include "switchboard.natsClients" .root)) -}}
{{- if not $V.nats.existingSecret }}{{ $_ := set $env "NATS_URL" $V.nats.url }}{{ end -}}
{{- if $V.nats.auth.existingSecret }}{{ $_ := set $env "NATS_USER" (index $V.nats.auth.users .component) }}{{ end -}}
{{- end -}}
{{- if has .component (splitList " " (include "switchboard.redisClients" .root)) -}}
{{- if not $V.redis.existingSecret }}{{ $_ := set $env "REDIS_URL" $V.redis.url }}{{ end -}}
{{- if $V.redis.auth.existingSecret }}{{ $_ := set $env "REDIS_USER" (index $V.redis.auth.users .component) }}{{ end -}}
{{- end -}}
{{- if and (eq .component "gateway") (not $V.usageDatabase.existingSecret) -}}
{{- $_ := set $env "USAGE_DATABASE_URL" $V.usageDatabase.url -}}
{{- end -}}
{{- if has .component (splitList " " (include "switchboard.webhookClients" .root)) -}}
{{- $webhookDatabase := include "switchboard.webhookDatabase" .root | fromYaml -}}
{{- if not $webhookDatabase.existingSecret }}{{ $_ := set $env "WEBHOOK_DATABASE_URL" $webhookDatabase.url }}{{ end -}}
{{- end -}}
{{- toYaml $env -}}
{{- end }}

{{/*
Everything a component's container reads from Secrets, as a YAML list of {env, secret, key}: the one
place that decides it. switchboard.secretFiles renders the list as files and the <env>_FILE
variables naming them (libs/config reads such a file as <env>), so no Secret value is ever in a
Switchboard container's environment, where child processes (ffmpeg, Chromium) and
/proc/<pid>/environ would see it. Each component gets only its own: CLUSTER_SECRET everywhere but
the webhook sender (no gRPC peer); the admin token and key pepper on the gateway; the webhook
secrets key (and the webhook database's URL when a Secret holds it) on the gateway and the webhook
sender; its NATS/Redis password on the brokers' clients (the key named after the component); S3 keys where the object store is used; the avatar vendor's key where
that back-end is configured; the collector's export headers (tracing.headersSecret, which often
carry a token) where the component traces.
*/}}
{{- define "switchboard.secretItems" -}}
{{- $root := .root -}}
{{- $V := .root.Values -}}
{{- $c := .component -}}
{{- $env := .values.env | default dict -}}
{{- $items := list -}}
{{- /* The webhook sender is called by no one and calls no worker: no cluster secret. */ -}}
{{- if ne $c "webhooks" -}}
{{- $items = append $items (dict "env" "CLUSTER_SECRET" "secret" (include "switchboard.clusterSecretName" $root) "key" $V.clusterAuth.existingSecretKey) -}}
{{- end -}}
{{- if eq $c "gateway" -}}
{{- $items = append $items (dict "env" "ADMIN_TOKEN" "secret" (include "switchboard.adminTokenSecretName" $root) "key" $V.adminToken.existingSecretKey) -}}
{{- $items = append $items (dict "env" "KEY_PEPPER" "secret" (include "switchboard.keyPepperSecretName" $root) "key" $V.keyPepper.existingSecretKey) -}}
{{- if and $V.usageDatabase.existingSecret (not (hasKey $env "USAGE_DATABASE_URL")) -}}
{{- $items = append $items (dict "env" "USAGE_DATABASE_URL" "secret" $V.usageDatabase.existingSecret "key" $V.usageDatabase.existingSecretKey) -}}
{{- end -}}
{{- end -}}
{{- if has $c (splitList " " (include "switchboard.webhookClients" $root)) -}}
{{- $items = append $items (dict "env" "WEBHOOK_SECRETS_KEY" "secret" (include "switchboard.webhookSecretsKeySecretName" $root) "key" $V.webhookSecretsKey.existingSecretKey) -}}
{{- $webhookDatabase := include "switchboard.webhookDatabase" $root | fromYaml -}}
{{- if $webhookDatabase.existingSecret -}}
{{- $items = append $items (dict "env" "WEBHOOK_DATABASE_URL" "secret" $webhookDatabase.existingSecret "key" $webhookDatabase.existingSecretKey) -}}
{{- end -}}
{{- end -}}
{{- if has $c (splitList " " (include "switchboard.natsClients" $root)) -}}
{{- if and $V.nats.existingSecret (not (hasKey $env "NATS_URL")) -}}
{{- $items = append $items (dict "env" "NATS_URL" "secret" $V.nats.existingSecret "key" $V.nats.existingSecretKey) -}}
{{- end -}}
{{- if $V.nats.auth.existingSecret -}}
{{- $items = append $items (dict "env" "NATS_PASSWORD" "secret" $V.nats.auth.existingSecret "key" $c) -}}
{{- end -}}
{{- end -}}
{{- if has $c (splitList " " (include "switchboard.redisClients" $root)) -}}
{{- if and $V.redis.existingSecret (not (hasKey $env "REDIS_URL")) -}}
{{- $items = append $items (dict "env" "REDIS_URL" "secret" $V.redis.existingSecret "key" $V.redis.existingSecretKey) -}}
{{- end -}}
{{- if $V.redis.auth.existingSecret -}}
{{- $items = append $items (dict "env" "REDIS_PASSWORD" "secret" $V.redis.auth.existingSecret "key" $c) -}}
{{- end -}}
{{- end -}}
{{- $s3 := include "switchboard.s3Secret" . -}}
{{- if and $s3 (include "switchboard.usesObjectStore" .) -}}
{{- $items = append $items (dict "env" "S3_ACCESS_KEY" "secret" $s3 "key" $V.s3.accessKeyKey) -}}
{{- $items = append $items (dict "env" "S3_SECRET_KEY" "secret" $s3 "key" $V.s3.secretKeyKey) -}}
{{- end -}}
{{- if include "switchboard.avatarConfigured" . -}}
{{- $items = append $items (dict "env" "AVATAR_API_KEY" "secret" .values.avatar.existingSecret "key" .values.avatar.existingSecretKey) -}}
{{- end -}}
{{- $headers := $V.tracing.headersSecret -}}
{{- if and $headers.name (include "switchboard.traces" .) -}}
{{- $items = append $items (dict "env" "OTEL_EXPORTER_OTLP_HEADERS" "secret" $headers.name "key" $headers.key) -}}
{{- end -}}
{{- toYaml $items -}}
{{- end }}

{{/*
A component's secretItems as one of (dict "root" $ "component" c "values" v "part" <part>):
  env     <NAME>_FILE=/var/run/secrets/switchboard/<name> for each item
  mount   the read-only mount of the volume below
  volume  one projected volume of every Secret item the component needs, nothing else
*/}}
{{- define "switchboard.secretFiles" -}}
{{- $dir := "/var/run/secrets/switchboard" -}}
{{- $items := include "switchboard.secretItems" . | fromYamlArray -}}
{{- if eq .part "env" -}}
{{- range $items }}
- name: {{ .env }}_FILE
  value: {{ printf "%s/%s" $dir (.env | lower | replace "_" "-") | quote }}
{{- end }}
{{- else if eq .part "mount" -}}
- { name: secrets, mountPath: {{ $dir }}, readOnly: true }
{{- else if eq .part "volume" -}}
{{- $bySecret := dict -}}
{{- range $items -}}
{{- $_ := set $bySecret .secret (append (get $bySecret .secret | default list) (dict "key" .key "path" (.env | lower | replace "_" "-"))) -}}
{{- end -}}
- name: secrets
  projected:
    # 0440: readable by the pod's fsGroup (the container's user is in it), writable by no one.
    defaultMode: 288
    sources:
      {{- range $name := keys $bySecret | sortAlpha }}
      - secret:
          name: {{ $name | quote }}
          items:
            {{- toYaml (index $bySecret $name) | nindent 12 }}
      {{- end }}
{{- else -}}
{{- fail (printf "switchboard.secretFiles: unknown part %q" .part) -}}
{{- end -}}
{{- end }}

{{/*
An env entry taken from a Secret: (dict "name" "S3_ACCESS_KEY" "secret" "s" "key" "accessKey").
Only for the models sync init container: the MinIO client (a third-party image) reads its
credentials from its environment, not from <NAME>_FILE. Switchboard's own containers get files.
*/}}
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
{{- include "switchboard.podPlacement" . }}
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
  readOnlyRootFilesystem: {{ .Values.securityContext.readOnlyRootFilesystem }}
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
