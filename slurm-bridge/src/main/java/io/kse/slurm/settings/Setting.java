package io.kse.slurm.settings;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;

/**
 * One {@code KSE_*} setting, declared once: its name, what it means, its default, and how it is
 * read. The configuration records read through it, and the generated docs/configuration.md prints
 * {@link #doc()}, so the default a reader sees is the one the code uses.
 *
 * @param defaultText the default as the docs show it; empty when there is none
 */
public record Setting<T>(
    String name, String meaning, String defaultText, Function<Settings, T> reader) {

  /** Reads this setting; a problem is recorded in {@code settings} when its value is wrong. */
  public T read(Settings settings) {
    return reader.apply(settings);
  }

  /** The meaning and default, as one line of the configuration reference. */
  public String doc() {
    return defaultText.isEmpty() ? meaning : meaning + " (default " + defaultText + ")";
  }

  public static Setting<String> string(String name, String meaning, String dflt) {
    return new Setting<>(name, meaning, dflt, s -> s.string(name, dflt));
  }

  /** A string whose default is described rather than fixed (e.g. "all", "POD_NAMESPACE"). */
  public static Setting<Optional<String>> optional(String name, String meaning, String dfltText) {
    return new Setting<>(name, meaning, dfltText, s -> s.optional(name, x -> x));
  }

  public static Setting<Path> requiredPath(String name, String meaning) {
    return new Setting<>(name, meaning + " (required)", "", s -> s.required(name, Path::of));
  }

  public static Setting<Optional<Path>> path(String name, String meaning) {
    return new Setting<>(name, meaning, "", s -> s.path(name));
  }

  public static Setting<Integer> integer(String name, String meaning, int dflt, int min, int max) {
    return new Setting<>(
        name, meaning, Integer.toString(dflt), s -> s.integer(name, dflt, min, max));
  }

  public static Setting<Long> number(String name, String meaning, long dflt, long min, long max) {
    return new Setting<>(name, meaning, Long.toString(dflt), s -> s.number(name, dflt, min, max));
  }

  public static Setting<Duration> millis(
      String name, String meaning, long dflt, long min, long max) {
    return new Setting<>(name, meaning, Long.toString(dflt), s -> s.millis(name, dflt, min, max));
  }

  /** A positive number of milliseconds. */
  public static Setting<Duration> millis(String name, String meaning, long dflt) {
    return new Setting<>(name, meaning, Long.toString(dflt), s -> s.millis(name, dflt));
  }

  public static Setting<Integer> positive(String name, String meaning, int dflt) {
    return new Setting<>(name, meaning, Integer.toString(dflt), s -> s.positive(name, dflt));
  }

  public static Setting<Boolean> bool(String name, String meaning, boolean dflt) {
    return new Setting<>(name, meaning, Boolean.toString(dflt), s -> s.bool(name, dflt));
  }

  public static <E extends Enum<E>> Setting<E> choice(
      String name, String meaning, E dflt, Class<E> type) {
    return new Setting<>(
        name, meaning, dflt.name().toLowerCase(Locale.ROOT), s -> s.choice(name, dflt, type));
  }

  /** Declared for the docs and the unknown-name check, read elsewhere (e.g. by logback). */
  public static Setting<Void> documented(String name, String meaning, String dfltText) {
    return new Setting<>(name, meaning, dfltText, s -> null);
  }
}
