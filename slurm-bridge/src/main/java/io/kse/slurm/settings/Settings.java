package io.kse.slurm.settings;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The one way {@code KSE_*} settings are read, by the extender and the bridge alike: each value
 * parsed with its default, and every problem collected with the variable's name (never stopping at
 * the first), so an operator fixes a configuration in one round. Unknown names with the given
 * prefix are problems too: a typo never passes silently.
 */
public final class Settings {
  private final Map<String, String> env;
  private final List<String> problems = new ArrayList<>();

  public Settings(Map<String, String> env) {
    this.env = Map.copyOf(env);
  }

  /** Every variable starting with {@code prefix} must be one of {@code known}. */
  public Settings refuseUnknown(String prefix, Collection<String> known) {
    env.keySet().stream()
        .filter(k -> k.startsWith(prefix) && !known.contains(k))
        .sorted()
        .forEach(
            k -> problem(k + ": unknown variable; known: " + known.stream().sorted().toList()));
    return this;
  }

  public <T> Optional<T> optional(String name, Function<String, T> parse) {
    String raw = env.get(name);
    if (raw == null || raw.isBlank()) {
      return Optional.empty();
    }
    try {
      return Optional.of(parse.apply(raw.trim()));
    } catch (RuntimeException e) {
      problem(name + "='" + raw + "': " + e.getMessage());
      return Optional.empty();
    }
  }

  public <T> T required(String name, Function<String, T> parse) {
    Optional<T> v = optional(name, parse);
    if (v.isEmpty() && (env.get(name) == null || env.get(name).isBlank())) {
      problem(name + ": required");
    }
    return v.orElse(null);
  }

  public String string(String name, String dflt) {
    return optional(name, s -> s).orElse(dflt);
  }

  public Optional<Path> path(String name) {
    return optional(name, Path::of);
  }

  /** A whole number from {@code min} to {@code max}. */
  public long number(String name, long dflt, long min, long max) {
    return optional(
            name,
            s -> {
              long v;
              try {
                v = Long.parseLong(s);
              } catch (NumberFormatException e) {
                throw outOfRange(min, max);
              }
              if (v < min || v > max) {
                throw outOfRange(min, max);
              }
              return v;
            })
        .orElse(dflt);
  }

  public int integer(String name, int dflt, int min, int max) {
    return (int) number(name, dflt, min, max);
  }

  /** A positive whole number of milliseconds. */
  public Duration millis(String name, long dflt) {
    return Duration.ofMillis(positive(name, dflt, " of milliseconds"));
  }

  /** A positive whole number. */
  public int positive(String name, int dflt) {
    return (int) Math.min(Integer.MAX_VALUE, positive(name, dflt, ""));
  }

  private long positive(String name, long dflt, String unit) {
    return optional(
            name,
            s -> {
              try {
                long v = Long.parseLong(s);
                if (v >= 1) {
                  return v;
                }
              } catch (NumberFormatException e) {
                // below
              }
              throw new IllegalArgumentException("expected a positive whole number" + unit);
            })
        .orElse(dflt);
  }

  /** Milliseconds from {@code min} to {@code max}. */
  public Duration millis(String name, long dflt, long min, long max) {
    return Duration.ofMillis(number(name, dflt, min, max));
  }

  public boolean bool(String name, boolean dflt) {
    return optional(
            name,
            s -> {
              if (!s.equals("true") && !s.equals("false")) {
                throw new IllegalArgumentException("expected true or false");
              }
              return Boolean.parseBoolean(s);
            })
        .orElse(dflt);
  }

  /** One of an enum's constants, written in lower case ({@code rest}, {@code scontrol}…). */
  public <E extends Enum<E>> E choice(String name, E dflt, Class<E> type) {
    List<String> names = new ArrayList<>();
    for (E e : type.getEnumConstants()) {
      names.add(e.name().toLowerCase(Locale.ROOT));
    }
    String expected =
        names.size() == 1
            ? names.get(0)
            : String.join(", ", names.subList(0, names.size() - 1))
                + " or "
                + names.get(names.size() - 1);
    return optional(
            name,
            s -> {
              try {
                return Enum.valueOf(type, s.toUpperCase(Locale.ROOT));
              } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("expected " + expected);
              }
            })
        .orElse(dflt);
  }

  public void problem(String p) {
    problems.add(p);
  }

  public List<String> problems() {
    return List.copyOf(problems);
  }

  /** Throws one exception listing every problem, if there is any. */
  public void throwIfAny(String what) {
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(what + ":\n  - " + String.join("\n  - ", problems));
    }
  }

  private static IllegalArgumentException outOfRange(long min, long max) {
    return new IllegalArgumentException("expected a whole number from " + min + " to " + max);
  }
}
