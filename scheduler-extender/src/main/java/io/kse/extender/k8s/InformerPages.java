package io.kse.extender.k8s;

/**
 * How the informers read their first listing (and any relisting): in pages, so that a large
 * cluster's list never lives whole in the heap. Unpaged, the node informer's list of 10,000 nodes
 * was decoded at once into full Node objects before the slim store kept a copy of each: about 100
 * MiB live for a moment, and G1 grew the committed heap to 424 MiB and RSS to 375 MiB for a live
 * set of 54 (the scale rig, benchmarks/changes.md).
 */
final class InformerPages {
  /** Objects per list request: client-go's default page. */
  static final long SIZE = 500;

  private InformerPages() {}
}
