package io.kse.extender.k8s;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.net.http.HttpClient;

/** Every Kubernetes client the extender makes: fabric8's JDK client, ChaCha20 first in TLS. */
public final class KubeClients {
  private KubeClients() {}

  /** Configured as fabric8 finds it: in-cluster, or from KUBECONFIG. */
  public static KubernetesClient build() {
    return new KubernetesClientBuilder().withHttpClientFactory(new Factory()).build();
  }

  public static KubernetesClient build(Config config) {
    return new KubernetesClientBuilder()
        .withConfig(config)
        .withHttpClientFactory(new Factory())
        .build();
  }

  /** fabric8's JDK client factory, its builder wrapped ({@link ChaChaFirst}). */
  static final class Factory extends JdkHttpClientFactory {
    @Override
    protected HttpClient.Builder createNewHttpClientBuilder() {
      return new ChaChaFirst(super.createNewHttpClientBuilder());
    }
  }
}
