package io.kse.extender.dra;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * What the API says of a pod's GPU claims: the claims (or the templates they come from) and their
 * requests, whole devices or shares, and the node's GPUs as our driver's ResourceSlices publish
 * them. Reads only; a claim that is missing or malformed is a {@link ClaimProblem} naming it.
 */
final class ClaimReads {
  private final KubernetesClient client;
  private final String driver;
  private final String indexAttribute;
  private final Supplier<String> shareCapacity;

  ClaimReads(
      KubernetesClient client,
      String driver,
      String indexAttribute,
      Supplier<String> shareCapacity) {
    this.client = client;
    this.driver = driver;
    this.indexAttribute = indexAttribute;
    this.shareCapacity = shareCapacity;
  }

  /** The node's GPUs from its ResourceSlices of our driver. */
  List<GpuDevice> published(String node) {
    List<GpuDevice> out = new ArrayList<>();
    for (ResourceSlice s :
        client.resources(ResourceSlice.class).withField("spec.nodeName", node).list().getItems()) {
      if (!driver.equals(s.getSpec().getDriver()) || s.getSpec().getDevices() == null) {
        continue;
      }
      for (var d : s.getSpec().getDevices()) {
        DeviceAttribute a =
            d.getAttributes() == null ? null : d.getAttributes().get(indexAttribute);
        if (a != null && a.getInt() != null) {
          DeviceAttribute profile =
              d.getAttributes() == null ? null : d.getAttributes().get(PROFILE_ATTRIBUTE);
          out.add(
              new GpuDevice(
                  driver,
                  s.getSpec().getPool().getName(),
                  d.getName(),
                  a.getInt(),
                  profile == null || profile.getString() == null ? "" : profile.getString()));
        }
      }
    }
    if (out.isEmpty()) {
      throw new ClaimProblem(
          "no ResourceSlice of driver "
              + driver
              + " publishes GPUs with attribute "
              + indexAttribute
              + " for node "
              + node);
    }
    return out;
  }

  /** The pod's claims, in the pod's order, by their generated or given names. */
  Map<String, ResourceClaim> claims(Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    Map<String, ResourceClaim> out = new LinkedHashMap<>();
    Pod fresh = null;
    for (PodResourceClaim c : pod.getSpec().getResourceClaims()) {
      String name = c.getResourceClaimName();
      if (name == null) {
        name = generatedName(pod, c.getName());
        if (name == null) { // the informer may lag the resourceclaim controller: ask once
          fresh =
              fresh != null
                  ? fresh
                  : client.pods().inNamespace(ns).withName(pod.getMetadata().getName()).get();
          name = fresh == null ? null : generatedName(fresh, c.getName());
        }
        if (name == null) {
          throw new ClaimProblem(
              "the ResourceClaim of pod claim "
                  + c.getName()
                  + " is not created yet (kube-controller-manager's resourceclaim controller)");
        }
      }
      out.put(name, claim(ns, name));
    }
    return out;
  }

  ResourceClaim claim(String ns, String name) {
    ResourceClaim claim =
        client.resources(ResourceClaim.class).inNamespace(ns).withName(name).get();
    if (claim == null) {
      throw new ClaimProblem("ResourceClaim " + ns + "/" + name + " does not exist");
    }
    return claim;
  }

  private static String generatedName(Pod pod, String entry) {
    if (pod.getStatus() == null || pod.getStatus().getResourceClaimStatuses() == null) {
      return null;
    }
    return pod.getStatus().getResourceClaimStatuses().stream()
        .filter(s -> entry.equals(s.getName()))
        .map(PodResourceClaimStatus::getResourceClaimName)
        .findFirst()
        .orElse(null);
  }

  /** The GPU requests of every claim entry, read from the templates or the named claims. */
  List<GpuRequest> templateRequests(Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    List<GpuRequest> out = new ArrayList<>();
    for (PodResourceClaim c : pod.getSpec().getResourceClaims()) {
      if (c.getResourceClaimTemplateName() != null) {
        ResourceClaimTemplate t =
            client
                .resources(ResourceClaimTemplate.class)
                .inNamespace(ns)
                .withName(c.getResourceClaimTemplateName())
                .get();
        if (t == null) {
          throw new ClaimProblem(
              "ResourceClaimTemplate "
                  + ns
                  + "/"
                  + c.getResourceClaimTemplateName()
                  + " (pod claim "
                  + c.getName()
                  + ") does not exist");
        }
        out.addAll(requests(c.getName(), t.getSpec().getSpec().getDevices().getRequests()));
      } else if (c.getResourceClaimName() != null) {
        out.addAll(requests(c.getResourceClaimName(), claim(ns, c.getResourceClaimName())));
      }
    }
    return out;
  }

  /** The share capacity an exact request asks of one GPU; 0 when it asks whole devices. */
  private long sharesOf(io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest e) {
    if (e.getCapacity() == null || e.getCapacity().getRequests() == null) {
      return 0;
    }
    io.fabric8.kubernetes.api.model.Quantity q =
        e.getCapacity().getRequests().get(shareCapacity.get());
    if (q == null) {
      return 0;
    }
    java.math.BigDecimal v = q.getNumericalAmount();
    if (v.signum() <= 0 || v.stripTrailingZeros().scale() > 0) {
      throw new ClaimProblem(
          "a request asks "
              + q
              + " of capacity "
              + shareCapacity.get()
              + "; shares of a GPU are a whole number of Slurm shards");
    }
    return v.longValueExact();
  }

  /** The MIG profile attribute NVIDIA's DRA driver publishes on a MIG device. */
  static final String PROFILE_ATTRIBUTE = "profile";

  /**
   * A selector naming a MIG profile: {@code device.attributes['gpu.nvidia.com'].profile ==
   * '1g.10gb'} (either quotes), the form NVIDIA's examples use.
   */
  private static final java.util.regex.Pattern PROFILE_SELECTOR =
      java.util.regex.Pattern.compile(
          "^\\s*device\\.attributes\\[\\s*['\"]([^'\"]+)['\"]\\s*\\]\\.profile\\s*==\\s*['\"]([^'\"]+)['\"]\\s*$");

  /**
   * The MIG profile an exact request's selectors name (issue 46); empty when none names one. A
   * request that names a profile must name one, for our driver, and select nothing else: what Slurm
   * allocates is a GPU of that profile's type, nothing finer.
   */
  private String migProfileOf(
      String claim,
      String request,
      io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest e) {
    if (e.getSelectors() == null || e.getSelectors().isEmpty()) {
      return "";
    }
    List<String> profiles = new ArrayList<>();
    List<String> others = new ArrayList<>();
    for (var sel : e.getSelectors()) {
      String cel = sel.getCel() == null ? null : sel.getCel().getExpression();
      java.util.regex.Matcher m = cel == null ? null : PROFILE_SELECTOR.matcher(cel);
      if (m != null && m.matches() && m.group(1).equals(driver)) {
        profiles.add(m.group(2));
      } else {
        others.add(cel == null ? "(not CEL)" : cel);
      }
    }
    if (profiles.isEmpty()) {
      return "";
    }
    if (profiles.size() > 1 || !others.isEmpty()) {
      throw new ClaimProblem(
          "ResourceClaim "
              + claim
              + " request "
              + request
              + " selects a MIG device by "
              + profiles.size()
              + " profile selector(s) and "
              + others.size()
              + " other(s) "
              + others
              + "; name one profile, device.attributes['"
              + driver
              + "'].profile == '<profile>', and nothing else (Slurm allocates by type)");
    }
    return profiles.get(0);
  }

  List<GpuRequest> requests(String claim, ResourceClaim c) {
    return requests(claim, c.getSpec().getDevices().getRequests());
  }

  private List<GpuRequest> requests(String claim, List<DeviceRequest> requests) {
    List<GpuRequest> out = new ArrayList<>();
    for (DeviceRequest r : requests == null ? List.<DeviceRequest>of() : requests) {
      if (r.getExactly() == null) {
        out.add(new GpuRequest(claim, r.getName(), "", "", 0, true));
        continue;
      }
      var e = r.getExactly();
      out.add(
          new GpuRequest(
              claim,
              r.getName(),
              e.getDeviceClassName(),
              e.getAllocationMode() == null ? "ExactCount" : e.getAllocationMode(),
              e.getCount() == null ? 1 : e.getCount(),
              false,
              sharesOf(e),
              migProfileOf(claim, r.getName(), e)));
    }
    return out;
  }
}
