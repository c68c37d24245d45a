# kube-slurm-extender image: the shaded extender jar on a JRE, non-root, nothing else.
#   docker build -t ghcr.io/kube-slurm-extender/kse-scheduler-extender:0.1.0 .
# The bases are build arguments: any JDK 17 / JRE 17 image (./kse image builds Debian ones with
# debootstrap where public registries are out of reach: docs/install.md).
# Tags: <version> (the Maven project version, which `java -jar … --version` prints) for releases,
# <version>-<git short sha> for builds from main; manifests/ pin a release tag, never "latest".

ARG BUILD_IMAGE=eclipse-temurin:17-jdk
ARG RUN_IMAGE=eclipse-temurin:17-jre

# ---- build: the pinned Maven wrapper, dependencies cached in their own layer
FROM ${BUILD_IMAGE} AS build
WORKDIR /src
COPY .mvn .mvn
COPY mvnw pom.xml ./
COPY policy/pom.xml policy/
COPY slurm-bridge/pom.xml slurm-bridge/
COPY policy-cli/pom.xml policy-cli/
COPY scheduler-extender/pom.xml scheduler-extender/
COPY benchmarks/pom.xml benchmarks/
RUN ./mvnw -B -q -pl scheduler-extender -am dependency:go-offline -DskipTests || true
COPY policy policy
COPY slurm-bridge slurm-bridge
COPY scheduler-extender scheduler-extender
RUN ./mvnw -B -q -pl scheduler-extender -am package -DskipTests -Dspotless.check.skip=true \
 && cp scheduler-extender/target/kse-scheduler-extender.jar /kse-scheduler-extender.jar

# ---- run: JRE 17, uid 65532, read-only root filesystem friendly (Vert.x cache under /tmp)
FROM ${RUN_IMAGE}
COPY --from=build /kse-scheduler-extender.jar /opt/kse/kse-scheduler-extender.jar
# class-data sharing: the classes a real extender loaded (scheduler-extender/src/main/cds/classlist,
# from a 200-pod run; testing/image/cds-classlist makes it again), archived by this image's own JVM.
# A fresh extender is ready in 1.5-2.0 s instead of 3.3-3.5 s (benchmarks/changes.md); a JVM that
# cannot use the archive runs without it. Classes the list names that no longer exist are skipped.
COPY scheduler-extender/src/main/cds/classlist /tmp/kse-classlist
RUN java -Xshare:dump -XX:SharedClassListFile=/tmp/kse-classlist -XX:SharedArchiveFile=/opt/kse/kse.jsa \
      -cp /opt/kse/kse-scheduler-extender.jar >/dev/null 2>&1 \
 && rm /tmp/kse-classlist
USER 65532:65532
ENV JAVA_TOOL_OPTIONS="-XX:SharedArchiveFile=/opt/kse/kse.jsa -XX:+UseG1GC -XX:TieredStopAtLevel=1 -XX:CompileThresholdScaling=0.1 -XX:MaxRAMPercentage=75 -XX:MaxHeapFreeRatio=20 -XX:MinHeapFreeRatio=10 -XX:G1PeriodicGCInterval=30000 -XX:MaxNewSize=48m -XX:+ExitOnOutOfMemoryError -Dvertx.cacheDirBase=/tmp/vertx"
EXPOSE 8888
ENTRYPOINT ["java", "-jar", "/opt/kse/kse-scheduler-extender.jar"]
CMD ["serve"]
